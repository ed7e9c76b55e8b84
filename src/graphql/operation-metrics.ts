import { type DocumentNode, getOperationAST } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { ServerContext } from '../context.ts';
import type { Metrics } from '../metrics/metrics.ts';

/** The operation a request runs: its name (undefined when anonymous) and type. */
export function operationOf(document: DocumentNode, operationName?: string | null) {
  const operation = getOperationAST(document, operationName);
  return { name: operation?.name?.value, type: operation?.operation ?? 'unknown' };
}

/**
 * Counts GraphQL operations by name, type, outcome and published document id: each executed one once
 * it is done (any error in its result is an error); each subscription once it is set up (its stream
 * opened, or refused with errors: envelop calls onSubscribe for them, never onExecute); and those
 * refused by validation under the name "invalid" (names never checked against the schema take no
 * label slots). Only /graphql runs through Yoga (REST is counted as HTTP routes); the fast path counts
 * its own the same way (fast-path.ts). First among the plugins, so it also sees results that a
 * later plugin sets before execution.
 */
export function useOperationMetrics(metrics: Metrics): Plugin<ServerContext> {
  /** Counts the operation once its result is known: any error in the result makes it an error. */
  const counter = (args: { document: DocumentNode; operationName?: string | null; contextValue: unknown }) => {
    const { exchange } = args.contextValue as ServerContext;
    const { name, type } = operationOf(args.document, args.operationName);
    return (errors: readonly unknown[] | undefined) =>
      metrics.countGraphQLOperation(name, type, errors?.length ? 'error' : 'success', exchange.documentId);
  };
  return {
    onValidate:
      ({ params, context: { exchange } }) =>
      ({ result }) => {
        if (result.length === 0) return;
        metrics.countGraphQLOperation('invalid', operationOf(params.documentAST).type, 'error', exchange.documentId);
      },
    onExecute: ({ args }) => {
      const count = counter(args);
      return { onExecuteDone: ({ result }) => count('errors' in result ? result.errors : undefined) };
    },
    onSubscribe: ({ args }) => {
      const count = counter(args);
      // Also called with the errors a later plugin stopped the subscription with (a refused price).
      return { onSubscribeResult: ({ result }) => count(isAsyncIterable(result) ? undefined : result.errors) };
    },
  };
}
