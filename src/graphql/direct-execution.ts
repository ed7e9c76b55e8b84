import type { Attributes } from '@opentelemetry/api';
import {
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  getOperationAST,
  type OperationTypeNode,
  validate,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Context, RequestIdentity, ServerContext } from '../context.ts';
import type { ExecuteSpans } from '../telemetry/graphql-spans.ts';
import type { ErrorLog } from './error-log.ts';
import type { ListSizeCheck } from './list-size.ts';
import { maskError } from './masked-errors.ts';
import { type OperationAdmission, type OperationPrice, priceOf } from './operation-admission.ts';
import { withVariableErrorCodes } from './variable-errors.ts';

type Variables = Readonly<Record<string, unknown>>;

/** One operation of a document that is known to be valid, compiled by graphql-jit once. */
export interface CompiledOperation {
  document: DocumentNode;
  operationName: string | undefined;
  /** The operation's own name (undefined when anonymous) and type, for metrics. */
  name: string | undefined;
  type: OperationTypeNode;
  query: CompiledQuery['query'];
  /** graphql-jit's serialiser for this operation's results, as Yoga uses it. */
  stringify: CompiledQuery['stringify'];
  /** The execute span's attributes, while tracing. */
  spanAttributes: Attributes | undefined;
  /** The scope it needs and its price in rate-limit points, worked out once. */
  price: OperationPrice;
}

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
 * same graphql-jit executor, and the same rules, in the order Yoga's plugins apply them (list-size
 * limit, variable codes, error log, masking). The plugins call the same functions (yoga.ts), so there
 * is one source for each rule; `test/graphql-fast-path.test.ts` holds its answers to Yoga's for the
 * same requests, and the REST suites pin REST's.
 */
export function createDirectExecution({
  schema,
  createContext,
  errorLog,
  listSizeCheck,
  admission,
  executeSpans,
}: DirectExecutionOptions) {
  /** Compiles one operation; throws when the document does not match the schema (a bug in ours). */
  function compile(document: DocumentNode, operationName?: string): CompiledOperation {
    const selected = getOperationAST(document, operationName);
    if (!selected) throw new Error(`the document has no operation ${operationName ?? 'to run without a name'}`);
    const name = selected.name?.value;
    const [invalid] = validate(schema, document);
    if (invalid) throw new Error(`operation ${name} does not match the schema: ${invalid.message}`);
    const compiled = compileQuery(schema, document, operationName);
    if (!isCompiledQuery(compiled)) {
      throw new Error(`operation ${name} does not compile: ${compiled.errors?.[0]?.message}`);
    }
    return {
      document,
      operationName,
      name,
      type: selected.operation,
      query: compiled.query.bind(compiled),
      stringify: compiled.stringify,
      spanAttributes: executeSpans?.attributesOf(document, operationName),
      price: priceOf(document, operationName) as OperationPrice,
    };
  }

  function coded(operation: CompiledOperation, variables: Variables, result: ExecutionResult): ExecutionResult {
    return withVariableErrorCodes(schema, operation.document, operation.operationName, variables, result);
  }

  /** Yoga's order (yoga.ts): the scope, the list-size limit, then the price, before anything runs. */
  function execute(
    operation: CompiledOperation,
    identity: RequestIdentity,
    variables: Variables,
  ): ExecutionResult | Promise<ExecutionResult> {
    const refused =
      admission.admit(operation.price, identity) ??
      listSizeCheck(schema, operation.document, operation.operationName, variables);
    if (refused) return { errors: [refused] };
    const charged = admission.charge(operation.price, identity);
    if (!charged) return executeAdmitted(operation, identity, variables);
    if (!(charged instanceof Promise)) return { errors: [charged] };
    return charged.then((overPrice) =>
      overPrice ? { errors: [overPrice] } : executeAdmitted(operation, identity, variables),
    );
  }

  function executeAdmitted(
    operation: CompiledOperation,
    identity: RequestIdentity,
    variables: Variables,
  ): ExecutionResult | Promise<ExecutionResult> {
    const result = operation.query(undefined, createContext({ identity }), variables);
    return result instanceof Promise
      ? result.then((done) => coded(operation, variables, done))
      : coded(operation, variables, result);
  }

  /** What a client may see: each error a resolver threw is logged once, then masked. */
  function masked(result: ExecutionResult, identity: RequestIdentity): ExecutionResult {
    if (!result.errors?.length) return result;
    errorLog.logResultErrors(result.errors, identity.id);
    return { ...result, errors: result.errors.map(maskError) };
  }

  return {
    compile,
    /** The operation's result as a client may see it; a promise only when a resolver was asynchronous. */
    run(
      operation: CompiledOperation,
      identity: RequestIdentity,
      variables: Variables,
    ): ExecutionResult | Promise<ExecutionResult> {
      const { spanAttributes } = operation;
      const result =
        executeSpans && spanAttributes
          ? executeSpans.run(spanAttributes, () => execute(operation, identity, variables))
          : execute(operation, identity, variables);
      return result instanceof Promise ? result.then((done) => masked(done, identity)) : masked(result, identity);
    },
  };
}

export type DirectExecution = ReturnType<typeof createDirectExecution>;
