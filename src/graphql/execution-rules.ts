import { useGraphQlJit } from '@envelop/graphql-jit';
import type { Tracer } from '@opentelemetry/api';
import { type DocumentNode, type ExecutionResult, type GraphQLError, type GraphQLSchema, Kind } from 'graphql';
import type { Plugin, YogaServerOptions } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context, ExecutionExchange, ServerContext } from '../context.ts';
import type { PublishedDocuments } from '../documents/published-documents.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { useGraphQLSpans } from '../telemetry/graphql-spans.ts';
import type { CompiledOperation } from './compiled-operation.ts';
import type { ErrorLog } from './error-log.ts';
import { introspectionCachePlugin, introspectionStep } from './introspection-cache.ts';
import { type ListSizeCheck, useListSizeLimit } from './list-size.ts';
import type { OperationAdmission } from './operation-admission.ts';
import { useOperationMetrics } from './operation-metrics.ts';
import { useQueryLimits } from './query-limits.ts';
import { type TrustedDocumentsMode, useTrustedDocuments } from './trusted-documents.ts';
import type { ValidatedDocuments } from './validated-documents.ts';
import { useVariableErrorCodes, withVariableErrorCodes } from './variable-errors.ts';

type Variables = Readonly<Record<string, unknown>>;
/** A plugin as Yoga's options take it: each plugin may ask for its own part of the context. */
type YogaPlugin = NonNullable<YogaServerOptions<ServerContext, Context>['plugins']>[number];

/** What the direct execution (REST, and the GraphQL fast path) runs of a rule, at the rule's place. */
export interface DirectStep {
  /** Before the operation runs: an error refuses it (the scope, the list-size limit, the price). */
  admit?(
    operation: CompiledOperation,
    exchange: ExecutionExchange,
    variables: Variables,
  ): GraphQLError | undefined | Promise<GraphQLError | undefined>;
  /** An answer kept from before, given instead of running the operation. */
  kept?(operation: CompiledOperation, variables: Variables): ExecutionResult | undefined;
  /** What the rule makes of the result; the later a rule, the sooner it sees the result (as Yoga's hooks nest). */
  settle?(
    result: ExecutionResult,
    operation: CompiledOperation,
    variables: Variables,
    exchange: ExecutionExchange,
  ): ExecutionResult;
}

/**
 * One per-request GraphQL rule: its Yoga plugins and, through the same functions, what the direct
 * execution runs; or why only Yoga runs it (`yogaOnly`).
 */
export type ExecutionRule = { name: string; yoga: readonly YogaPlugin[] } & (
  | { direct: DirectStep; yogaOnly?: never }
  | { yogaOnly: string; direct?: never }
);

export interface ExecutionRuleOptions {
  schema: GraphQLSchema;
  logger: Logger;
  /** Logs each error a resolver threw once, whichever path ran it. */
  errorLog: ErrorLog;
  listSizeCheck: ListSizeCheck;
  admission: OperationAdmission;
  metrics: Metrics;
  /** The published documents clients may name by id, and who may send documents of their own. */
  trustedDocuments: { mode: TrustedDocumentsMode; documents: PublishedDocuments };
  /** While tracing: parse, validate and execute spans (the fast path is off then). */
  tracer?: Tracer | undefined;
  /** Learns the documents Yoga found valid, for the fast path (off while tracing). */
  validatedDocuments?: ValidatedDocuments | undefined;
  /** ETag and 304 for GETs on Yoga's path. */
  conditionalGets: Plugin<Record<string, never>, ServerContext>;
}

const hasOneOperation = (document: DocumentNode) =>
  document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION).length === 1;

/**
 * graphql-jit runs a subscription's query per event with the variables it has already coerced, and
 * coerces them again: an enum variable's internal value (`sold`) is then refused. graphql-js runs them.
 */
const isSubscription = (document: DocumentNode) =>
  document.definitions.some(
    (definition) => definition.kind === Kind.OPERATION_DEFINITION && definition.operation === 'subscription',
  );

/**
 * A document that does not compile (an unknown operationName) answers with its errors; by default the
 * plugin also writes them with console.error, outside the JSON log. Only for documents of one
 * operation: the plugin caches what it compiled by document alone.
 */
const useJitForSingleOperations = () =>
  useGraphQlJit(
    {},
    { onError: () => {}, enableIf: ({ document }) => hasOneOperation(document) && !isSubscription(document) },
  );

/** The options, with the spans' two plugins made once for the two places they run. */
type Parts = ExecutionRuleOptions & { tracing: ReturnType<typeof useGraphQLSpans> | undefined };

type RuleDeclaration = { name: string; yoga: (parts: Parts) => readonly YogaPlugin[] } & (
  | { direct: (parts: Parts) => DirectStep; yogaOnly?: never }
  | { yogaOnly: string; direct?: never }
);

/**
 * Every per-request rule of a GraphQL operation, in the order Yoga runs them. Yoga's plugin list is
 * built from it (graphql-http/yoga.ts) and so is the direct execution (direct-execution.ts);
 * `test/execution-rules.test.ts` fails when Yoga runs a per-request plugin that is not named here.
 */
const RULES: readonly RuleDeclaration[] = [
  {
    name: 'operation metric',
    yoga: ({ metrics }) => [useOperationMetrics(metrics)],
    yogaOnly: 'the fast path counts the operations it runs with the same metric; REST is counted by route',
  },
  {
    // Before parsing: an id becomes its document, and a refused request stops here.
    name: 'trusted documents and persisted queries',
    yoga: ({ trustedDocuments, metrics, logger }) => useTrustedDocuments({ ...trustedDocuments, metrics, logger }),
    yogaOnly: 'the fast path asks the same gate before it runs; REST runs only its own documents',
  },
  {
    name: 'parse, validate and execute spans',
    yoga: ({ tracing }) => (tracing ? [tracing.spans] : []),
    yogaOnly: 'while tracing every GraphQL request goes through Yoga; REST opens its execute span itself',
  },
  {
    // Before the masking (Yoga's maskedErrors, and the direct execution's, after every rule): it sees
    // what the resolvers threw.
    name: 'error log',
    yoga: ({ errorLog }) => [errorLog.plugin],
    direct: ({ errorLog }) => ({ settle: (result, _operation, _variables, { id }) => errorLog.logged(result, id) }),
  },
  {
    name: 'query limits',
    yoga: () => useQueryLimits(),
    yogaOnly: 'they judge a document once: the direct execution runs only documents Yoga or REST validated',
  },
  {
    // Before anything runs, and before the list-size limit: a key without the scope learns that first.
    name: 'scope',
    yoga: ({ admission }) => [admission.scopePlugin],
    direct: ({ admission }) => ({ admit: ({ price }, exchange) => admission.admit(price, exchange) }),
  },
  {
    name: 'list-size limit',
    yoga: ({ listSizeCheck }) => [useListSizeLimit(listSizeCheck)],
    direct: ({ schema, listSizeCheck }) => ({
      admit: ({ document, operationName }, _exchange, variables) =>
        listSizeCheck(schema, document, operationName, variables),
    }),
  },
  {
    // After the list-size limit: a request refused for its size pays no more than the edge's point.
    name: 'price',
    yoga: ({ admission }) => [admission.chargePlugin],
    direct: ({ admission }) => ({ admit: ({ price }, exchange) => admission.charge(price, exchange) }),
  },
  {
    // After the price is paid: a kept introspection answer runs nothing more.
    name: 'introspection answers kept',
    yoga: () => [introspectionCachePlugin()],
    direct: ({ schema }) => introspectionStep(schema),
  },
  {
    name: 'variable error codes',
    yoga: () => [useVariableErrorCodes()],
    direct: ({ schema }) => ({
      settle: (result, { document, operationName }, variables) =>
        withVariableErrorCodes(schema, document, operationName, variables, result),
    }),
  },
  {
    name: 'graphql-jit',
    yoga: () => [useJitForSingleOperations()],
    yogaOnly: 'the direct execution runs operations graphql-jit compiled once (compiled-operation.ts)',
  },
  {
    // After the JIT, whose onExecute replaces the execute function without chaining.
    name: 'span context for the executor',
    yoga: ({ tracing }) => (tracing ? [tracing.activate] : []),
    yogaOnly: 'part of the spans above',
  },
  {
    name: 'conditional GETs',
    yoga: ({ conditionalGets }) => [conditionalGets],
    yogaOnly: 'an HTTP answer: the fast path answers through the same conditionalAnswer, REST revalidates its own',
  },
  {
    // Last: a document is learnt only once every plugin that could refuse it has passed it.
    name: 'validated documents',
    yoga: ({ validatedDocuments }) => (validatedDocuments ? [validatedDocuments.plugin] : []),
    yogaOnly: 'it teaches the fast path which documents Yoga found valid',
  },
];

/** The rules made for one service: each with its Yoga plugins and its direct step or Yoga-only reason. */
export function executionRules(options: ExecutionRuleOptions): ExecutionRule[] {
  const parts: Parts = { ...options, tracing: options.tracer ? useGraphQLSpans(options.tracer) : undefined };
  return RULES.map((rule): ExecutionRule => {
    const yoga = rule.yoga(parts);
    return rule.direct
      ? { name: rule.name, yoga, direct: rule.direct(parts) }
      : { name: rule.name, yoga, yogaOnly: rule.yogaOnly };
  });
}

/** The direct execution's steps, in the declaration's order. */
export const directStepsOf = (rules: readonly ExecutionRule[]): DirectStep[] =>
  rules.flatMap((rule) => (rule.direct ? [rule.direct] : []));
