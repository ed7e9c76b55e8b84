import type { DocumentNode, ExecutionResult, GraphQLError, GraphQLSchema } from 'graphql';
import type { Context, ExecutionExchange, ServerContext } from '../context.ts';
import type { ExecuteSpans } from '../telemetry/graphql-spans.ts';
import { type CompiledOperation, compileOperation } from './compiled-operation.ts';
import { maskError } from './errors.ts';
import type { DirectStep } from './execution-rules.ts';

export type { CompiledOperation } from './compiled-operation.ts';

type Variables = Readonly<Record<string, unknown>>;
type Result = ExecutionResult | Promise<ExecutionResult>;

export interface DirectExecutionOptions {
  schema: GraphQLSchema;
  createContext: (serverContext: ServerContext) => Context;
  /** The direct halves of the execution rules (execution-rules.ts), in their order. */
  steps: readonly DirectStep[];
  /** While tracing: the execute span. */
  executeSpans?: ExecuteSpans;
}

/**
 * Runs operations whose documents are already parsed and validated (REST's own, and those Yoga has
 * validated for the GraphQL fast path) without Yoga's per-request envelop: the same context, the
 * same graphql-jit executor, and the same rules, read from the one declaration Yoga's plugins come
 * from (execution-rules.ts). `test/graphql-fast-path.test.ts` holds its answers to Yoga's for the
 * same requests, and the REST suites pin REST's.
 */
export function createDirectExecution(options: DirectExecutionOptions) {
  const { schema, createContext, steps, executeSpans } = options;

  /** Steps before `end` see the result, the latest first, as Yoga's hooks nest. */
  function settled(result: ExecutionResult, end: number, run: Run): ExecutionResult {
    let answer = result;
    for (let i = end - 1; i >= 0; i--)
      answer = steps[i]?.settle?.(answer, run.operation, run.variables, run.exchange) ?? answer;
    return answer;
  }

  /** From step `from` on: each step may refuse or answer from what it kept; then the operation runs. */
  function execute(run: Run, from: number): Result {
    const { operation, exchange, variables } = run;
    for (let i = from; i < steps.length; i++) {
      const step = steps[i] as DirectStep;
      const refused = step.admit?.(operation, exchange, variables);
      if (refused instanceof Promise) {
        return refused.then((error) => (error ? refusal(error, i, run) : execute(run, i + 1)));
      }
      if (refused) return refusal(refused, i, run);
      const kept = step.kept?.(operation, variables);
      if (kept) return settled(kept, i, run);
    }
    const result = operation.query(undefined, createContext({ exchange }), variables);
    return result instanceof Promise
      ? result.then((done) => settled(done, steps.length, run))
      : settled(result, steps.length, run);
  }

  const refusal = (error: GraphQLError, at: number, run: Run) => settled({ errors: [error] }, at, run);

  return {
    compile: (document: DocumentNode, operationName?: string): CompiledOperation =>
      compileOperation(schema, document, operationName, executeSpans),
    /** The operation's result as a client may see it; a promise only when a step or a resolver was asynchronous. */
    run(operation: CompiledOperation, exchange: ExecutionExchange, variables: Variables): Result {
      const run = { operation, exchange, variables };
      const { spanAttributes } = operation;
      // The span sees what the resolvers threw; a client sees it masked, as Yoga masks after its plugins.
      const result =
        executeSpans && spanAttributes ? executeSpans.run(spanAttributes, () => execute(run, 0)) : execute(run, 0);
      return result instanceof Promise ? result.then(masked) : masked(result);
    },
  };
}

/** maskError, as Yoga's maskedErrors applies it (graphql-http/yoga.ts): stack traces never reach a client. */
const masked = (result: ExecutionResult): ExecutionResult =>
  result.errors?.length ? { ...result, errors: result.errors.map(maskError) } : result;

interface Run {
  operation: CompiledOperation;
  exchange: ExecutionExchange;
  variables: Variables;
}

export type DirectExecution = ReturnType<typeof createDirectExecution>;
