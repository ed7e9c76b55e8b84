import { useGraphQlJit } from '@envelop/graphql-jit';
import type { Tracer } from '@opentelemetry/api';
import { type DocumentNode, Kind } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context, ServerContext } from './context.ts';
import type { PublishedDocuments } from './documents/published-documents.ts';
import type { ErrorLog } from './graphql/error-log.ts';
import { introspectionCachePlugin } from './graphql/introspection-cache.ts';
import { type ListSizeCheck, useListSizeLimit } from './graphql/list-size.ts';
import { maskError } from './graphql/masked-errors.ts';
import type { OperationAdmission } from './graphql/operation-admission.ts';
import { useOperationMetrics } from './graphql/operation-metrics.ts';
import { useQueryLimits } from './graphql/query-limits.ts';
import { schema } from './graphql/schema/index.ts';
import { type TrustedDocumentsMode, useTrustedDocuments } from './graphql/trusted-documents.ts';
import type { ValidatedDocuments } from './graphql/validated-documents.ts';
import { useVariableErrorCodes } from './graphql/variable-errors.ts';
import { createYogaLogger } from './graphql/yoga-logger.ts';
import type { Metrics } from './metrics/metrics.ts';
import { useGraphQLSpans } from './telemetry/graphql-spans.ts';

export const GRAPHQL_ENDPOINT = '/graphql';

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

export interface GraphQLServerOptions {
  createContext: (serverContext: ServerContext) => Context;
  logger: Logger;
  /** Shared with the direct execution, so an error is logged once whichever path ran it. */
  errorLog: ErrorLog;
  /** Most pets one operation may ask for (see useListSizeLimit). */
  listSizeCheck: ListSizeCheck;
  /** Scopes and prices of operations: shared with the direct execution. */
  admission: OperationAdmission;
  metrics: Metrics;
  /** The published documents clients may name by id, and who may send documents of their own. */
  trustedDocuments: { mode: TrustedDocumentsMode; documents: PublishedDocuments };
  /** While tracing: parse, validate and execute spans. */
  tracer?: Tracer;
  /** Learns the documents Yoga found valid, for the fast path. */
  validatedDocuments?: ValidatedDocuments;
  /** ETag and 304 for GETs on Yoga's path: the fast path answers through the same conditionalAnswer. */
  conditionalGets?: Plugin<Record<string, never>, ServerContext>;
}

/**
 * Yoga's own plugins. The direct execution (REST, and the GraphQL fast path) applies every one of
 * their per-request rules too, through the same functions: the operation metric (graphql-fast-path.ts),
 * the trusted-documents gate and swap (graphql-fast-request.ts; the gate's automatic persisted
 * queries act only on requests carrying `extensions`, which the fast path always leaves to Yoga,
 * hasOrdinaryParams, and REST never sends), the error log, the scope, the
 * list-size limit, the price, the introspection cache, the variable codes and graphql-jit
 * (direct-execution.ts); the query
 * limits and the validated documents judge a document once, before the fast path may run it
 * (validated-documents.ts); the spans, while tracing, when the fast path is off (the direct execution
 * opens REST's execute span). A plugin added here must say the same.
 */
function mirroredPlugins(options: GraphQLServerOptions) {
  const { logger, errorLog, listSizeCheck, admission, metrics, trustedDocuments, tracer, validatedDocuments } = options;
  const { conditionalGets } = options;
  const tracing = tracer ? useGraphQLSpans(tracer) : undefined;
  // The list-size limit stops execution before useVariableErrorCodes would rewrite its errors.
  return [
    useOperationMetrics(metrics),
    // Before parsing: an id becomes its document, and a refused request stops here.
    ...useTrustedDocuments({ ...trustedDocuments, metrics, logger }),
    ...(tracing ? [tracing.spans] : []),
    // Before Yoga's masking (it comes after every plugin here): it sees what the resolvers threw.
    errorLog.plugin,
    ...useQueryLimits(),
    // Before anything runs, and before the list-size limit: a key without the scope learns that first.
    admission.scopePlugin,
    useListSizeLimit(listSizeCheck),
    // After the list-size limit: a request refused for its size pays no more than the edge's point.
    admission.chargePlugin,
    // After the price is paid: a kept introspection answer runs nothing more.
    introspectionCachePlugin(),
    useVariableErrorCodes(),
    // A document that does not compile (an unknown operationName) answers with its errors; by
    // default the plugin also writes them with console.error, outside the JSON log.
    // Only for documents of one operation: the plugin caches what it compiled by document alone,
    // so a second operation of the same document would run the first one's code.
    useGraphQlJit(
      {},
      { onError: () => {}, enableIf: ({ document }) => hasOneOperation(document) && !isSubscription(document) },
    ),
    // After the JIT, whose onExecute replaces the execute function without chaining.
    ...(tracing ? [tracing.activate] : []),
    // Conditional GETs (edge/graphql-conditional-get.ts): the fast path answers through the same function.
    ...(conditionalGets ? [conditionalGets] : []),
    // Last: a document is learnt only once every plugin that could refuse it has passed it.
    ...(validatedDocuments ? [validatedDocuments.plugin] : []),
  ];
}

/**
 * Yoga for GraphQL execution only: the edge in front of it answers health, readiness, GraphiQL and
 * authentication, so none of Yoga's own HTTP extras run here. REST, and GraphQL documents Yoga has
 * validated before, run through the direct execution instead (graphql/direct-execution.ts), with the same rules.
 */
export function createGraphQLServer(options: GraphQLServerOptions) {
  const { createContext, logger, errorLog } = options;
  return createYoga<ServerContext, Context>({
    schema,
    context: createContext,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    graphiql: false,
    landingPage: false,
    // Server-to-server clients and same-origin GraphiQL need no CORS; opening it is a deployment decision.
    cors: false,
    // Nothing here takes file uploads; multipart parsing would only be more to attack.
    multipart: false,
    // The edge reads and limits bodies: Yoga's own limiter costs throughput (docs/benchmarks.md).
    maxRequestBodySize: false,
    // GraphQL-over-HTTP's persisted documents: a POST body may name one instead of sending a query.
    extraParamNames: ['documentId'],
    // isDev false: stack traces never reach clients, whatever NODE_ENV says.
    maskedErrors: { maskError, isDev: false },
    logging: createYogaLogger(logger, errorLog),
    plugins: mirroredPlugins(options),
  });
}

export type GraphQLServer = ReturnType<typeof createGraphQLServer>;
