import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import type { Context, ExecutionExchange, ServerContext } from '../context.ts';
import type { ExecuteSpans } from '../telemetry/graphql-spans.ts';
import { type CompiledOperation, compileOperation } from './compiled-operation.ts';
import type { ErrorLog } from './error-log.ts';
import { introspectionCacheOf } from './introspection-cache.ts';
import type { ListSizeCheck } from './list-size.ts';
import { maskError } from './masked-errors.ts';
import type { OperationAdmission } from './operation-admission.ts';
import { withVariableErrorCodes } from './variable-errors.ts';

export type { CompiledOperation } from './compiled-operation.ts';

type Variables = Readonly<Record<string, unknown>>;
type Result = ExecutionResult | Promise<ExecutionResult>;

export interface DirectExecutionOptions {
  schema: GraphQLSchema;
  createContext: (serverContext: ServerContext) => Context;
  errorLog: ErrorLog;
  listSizeCheck: ListSizeCheck;
  /** The key's scope and the operation's price, decided before it runs: shared with Yoga's plugin. */
  admission: OperationAdmission;
  /** While tracing: the execute span. */
  executeSpans?: ExecuteSpans;
}

/**
 * Runs operations whose documents are already parsed and validated (REST's own, and those Yoga has
 * validated for the GraphQL fast path) without Yoga's per-request envelop: the same context, the
 * same graphql-jit executor, and the same rules, in the order Yoga's plugins apply them (scope,
 * list-size limit, price, introspection cache, variable codes, error log, masking). The plugins call the same functions
 * (yoga.ts), so there is one source for each rule; `test/graphql-fast-path.test.ts` holds its
 * answers to Yoga's for the same requests, and the REST suites pin REST's.
 */
export function createDirectExecution(options: DirectExecutionOptions) {
  const { schema, createContext, errorLog, listSizeCheck, admission, executeSpans } = options;
  const introspections = introspectionCacheOf(schema);

  function executeAdmitted(operation: CompiledOperation, exchange: ExecutionExchange, variables: Variables): Result {
    const { document, operationName, price } = operation;
    const kept = price.introspection ? introspections.get(document, operationName, variables) : undefined;
    if (kept) return kept;
    const coded = (result: ExecutionResult) => {
      if (price.introspection) introspections.set(document, operationName, variables, result);
      return withVariableErrorCodes(schema, document, operationName, variables, result);
    };
    const result = operation.query(undefined, createContext({ exchange }), variables);
    return result instanceof Promise ? result.then(coded) : coded(result);
  }

  /** Yoga's order (yoga.ts): the scope, the list-size limit, then the price, before anything runs. */
  function execute(operation: CompiledOperation, exchange: ExecutionExchange, variables: Variables): Result {
    const refused =
      admission.admit(operation.price, exchange) ??
      listSizeCheck(schema, operation.document, operation.operationName, variables);
    if (refused) return { errors: [refused] };
    const charged = admission.charge(operation.price, exchange);
    if (!charged) return executeAdmitted(operation, exchange, variables);
    if (!(charged instanceof Promise)) return { errors: [charged] };
    return charged.then((overPrice) =>
      overPrice ? { errors: [overPrice] } : executeAdmitted(operation, exchange, variables),
    );
  }

  /** What a client may see: each error a resolver threw is logged once, then masked. */
  function masked(result: ExecutionResult, exchange: ExecutionExchange): ExecutionResult {
    if (!result.errors?.length) return result;
    errorLog.logResultErrors(result.errors, exchange.id);
    return { ...result, errors: result.errors.map(maskError) };
  }

  return {
    compile: (document: DocumentNode, operationName?: string): CompiledOperation =>
      compileOperation(schema, document, operationName, executeSpans),
    /** The operation's result as a client may see it; a promise only when a resolver was asynchronous. */
    run(operation: CompiledOperation, exchange: ExecutionExchange, variables: Variables): Result {
      const { spanAttributes } = operation;
      const result =
        executeSpans && spanAttributes
          ? executeSpans.run(spanAttributes, () => execute(operation, exchange, variables))
          : execute(operation, exchange, variables);
      return result instanceof Promise ? result.then((done) => masked(done, exchange)) : masked(result, exchange);
    },
  };
}

export type DirectExecution = ReturnType<typeof createDirectExecution>;
