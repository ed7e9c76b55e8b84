import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { CompiledOperation } from './compiled-operation.ts';
import { priceOf } from './operation-admission.ts';

/** Answers kept per schema, the oldest going first: clients send a handful of introspection documents. */
export const MAX_CACHED_INTROSPECTIONS = 16;

type Variables = Readonly<Record<string, unknown>> | undefined;

function createIntrospectionCache(max: number) {
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextId = 0;
  /** Whole answers by document, operation name and variables, the oldest first. */
  const kept = new Map<string, ExecutionResult>();
  const keyOf = (document: DocumentNode, operationName: string | null | undefined, variables: Variables) => {
    const id = documentIds.get(document) ?? nextId++;
    documentIds.set(document, id);
    return `${id}\n${operationName ?? ''}\n${variables === undefined ? '' : JSON.stringify(variables)}`;
  };
  return {
    get(document: DocumentNode, operationName: string | null | undefined, variables: Variables) {
      const found = kept.get(keyOf(document, operationName, variables));
      // A copy: whatever answers it may add to the result (extensions) without touching the kept one.
      return found && { ...found };
    },
    set(
      document: DocumentNode,
      operationName: string | null | undefined,
      variables: Variables,
      result: ExecutionResult,
    ) {
      // Only whole answers: an error may depend on the request (a deadline), not on the schema.
      if (result.errors?.length || !result.data) return;
      const key = keyOf(document, operationName, variables);
      if (kept.has(key)) return;
      if (kept.size >= max) kept.delete(kept.keys().next().value as string);
      kept.set(key, { data: result.data });
    },
  };
}

export type IntrospectionCache = ReturnType<typeof createIntrospectionCache>;

const caches = new WeakMap<GraphQLSchema, IntrospectionCache>();

/** Answers to pure introspection depend on the schema alone: built once, served to Yoga and the direct execution. */
export function introspectionCacheOf(schema: GraphQLSchema, max = MAX_CACHED_INTROSPECTIONS): IntrospectionCache {
  let cache = caches.get(schema);
  if (!cache) {
    cache = createIntrospectionCache(max);
    caches.set(schema, cache);
  }
  return cache;
}

/** Yoga's half: after the price is paid, before graphql-jit runs the operation. */
export function introspectionCachePlugin(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const { document, operationName, variableValues, schema } = args;
      if (!priceOf(document, operationName)?.introspection) return;
      const cache = introspectionCacheOf(schema);
      const variables = variableValues ?? undefined;
      const kept = cache.get(document, operationName, variables);
      if (kept) return setResultAndStopExecution(kept);
      return {
        onExecuteDone({ result }) {
          if (!(Symbol.asyncIterator in result)) cache.set(document, operationName, variables, result);
        },
      };
    },
  };
}

/** The direct execution's half: a kept answer instead of running, and whole answers kept. */
export function introspectionStep(schema: GraphQLSchema) {
  const introspections = introspectionCacheOf(schema);
  return {
    kept: ({ price, document, operationName }: CompiledOperation, variables: Variables) =>
      price.introspection ? introspections.get(document, operationName, variables) : undefined,
    settle(result: ExecutionResult, { price, document, operationName }: CompiledOperation, variables: Variables) {
      if (price.introspection) introspections.set(document, operationName, variables, result);
      return result;
    },
  };
}
