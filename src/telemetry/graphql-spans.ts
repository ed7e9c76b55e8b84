import { type Attributes, context, type Span, type Tracer, trace } from '@opentelemetry/api';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { recordErrors } from './exception.ts';

/** Its type and, when it has one, its name: never its document or its variables. */
function operationAttributes(document: Parameters<typeof getOperationAST>[0], name?: string | null): Attributes {
  const operation = getOperationAST(document, name);
  const attributes: Attributes = { 'graphql.operation.type': operation?.operation ?? 'unknown' };
  if (operation?.name) attributes['graphql.operation.name'] = operation.name.value;
  return attributes;
}

/**
 * Runs the operation with its execute span active, so the resolvers' database spans hang below it.
 * An executor that throws never reaches onExecuteDone: its span is ended here, with the error.
 */
function inside<A, R>(span: Span, execute: (args: A) => R | Promise<R>): (args: A) => R | Promise<R> {
  const fail = (error: unknown): never => {
    recordErrors(span, [error]);
    span.end();
    throw error;
  };
  return (args) => {
    try {
      const result = context.with(trace.setSpan(context.active(), span), execute, undefined, args);
      return result instanceof Promise ? result.catch(fail) : result;
    } catch (error) {
      return fail(error);
    }
  };
}

/** Ends an execute span; a result with errors marks it failed (a stream's results are not read). */
function finish(span: Span, result: object): void {
  const { errors } = result as { errors?: readonly unknown[] };
  if (errors?.length) recordErrors(span, errors);
  span.end();
}

/**
 * Parse, validate and execute spans, under whatever span is active: the server span on both faces
 * (REST, and the GraphQL fast path, run without Yoga: createExecuteSpans gives them the execute span).
 * Two plugins: `spans` early among the plugins, so it also sees operations another plugin stops
 * before they run (the list-size limit); `activate` after useGraphQlJit, whose onExecute replaces
 * the execute function without chaining, so it wraps the function that really runs, and last, so
 * the errors it records are the ones clients get (before masking, which Yoga does after every
 * plugin). Envelop hands every onExecute hook of one execution the same `args` object: that is how
 * the two meet.
 */
export function useGraphQLSpans(tracer: Tracer): { spans: Plugin; activate: Plugin } {
  /** Execute spans not yet taken over by `activate`. */
  const started = new WeakMap<object, Span>();
  const spans: Plugin = {
    onParse() {
      const span = tracer.startSpan('graphql.parse');
      return ({ result }) => {
        if (result instanceof Error) recordErrors(span, [result], 'GRAPHQL_PARSE_FAILED');
        span.end();
      };
    },
    onValidate() {
      const span = tracer.startSpan('graphql.validate');
      return ({ result }) => {
        if (result.length > 0) recordErrors(span, result, 'GRAPHQL_VALIDATION_FAILED');
        span.end();
      };
    },
    onExecute({ args }) {
      const span = tracer.startSpan('graphql.execute', {
        attributes: operationAttributes(args.document, args.operationName),
      });
      started.set(args, span);
      return {
        // Still here: a plugin stopped the operation before it ran, and `activate` never saw it.
        onExecuteDone({ result }) {
          if (started.get(args) !== span) return;
          started.delete(args);
          finish(span, result);
        },
      };
    },
  };
  const activate: Plugin = {
    onExecute({ args, executeFn, setExecuteFn }) {
      const span = started.get(args);
      if (!span) return;
      started.delete(args);
      setExecuteFn(inside(span, executeFn));
      return { onExecuteDone: ({ result }) => finish(span, result) };
    },
  };
  return { spans, activate };
}

/**
 * The execute span of an operation run without Yoga (REST, the GraphQL fast path): the same name,
 * attributes and error recording as the plugins', with the span active while the operation runs.
 */
export function createExecuteSpans(tracer: Tracer) {
  return {
    /** Attributes are worked out once per compiled operation, not per request. */
    attributesOf: operationAttributes,
    run<T extends object>(attributes: Attributes, execute: () => T | Promise<T>): T | Promise<T> {
      const span = tracer.startSpan('graphql.execute', { attributes });
      const done = (result: T): T => {
        finish(span, result);
        return result;
      };
      const result = inside(span, execute)(undefined);
      return result instanceof Promise ? result.then(done) : done(result);
    },
  };
}

export type ExecuteSpans = ReturnType<typeof createExecuteSpans>;
