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
 * Counts /graphql's operations by name, type, outcome and document id: executed ones when done, a
 * subscription once set up (envelop calls onSubscribe, not onExecute), validation refusals as "invalid"
 * (unchecked names take no label slots). First among the plugins, to see results later ones set.
 */
export function useOperationMetrics(metrics: Metrics): Plugin<ServerContext> {
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
