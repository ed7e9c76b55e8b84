import { type Attributes, context, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { GraphQLError, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { DomainError } from '../errors.ts';
import { isOwnGraphQLError, rootCause } from '../graphql/errors.ts';

/** What a span records of one error: exception.type, and exception.message and stacktrace when allowed. */
interface RecordedException {
  name: string;
  message?: string;
  stack?: string;
}

/** A result with hundreds of errors says all it needs to in its first few. */
const MOST_RECORDED = 5;

/**
 * What a span may say about an error: a client's mistake its code only (GraphQL's messages quote the
 * document or variables), an operating condition our message, a bug its message and stack.
 */
function exceptionOf(error: unknown, clientCode = 'GRAPHQL_ERROR'): RecordedException {
  const cause = rootCause(error);
  if (cause instanceof DomainError) {
    if (cause.byClient) return { name: cause.code };
    return { name: cause.name, message: cause.message, ...(cause.expected ? {} : { stack: cause.stack }) };
  }
  if (isOwnGraphQLError(error)) {
    const code = error instanceof GraphQLError ? error.extensions.code : undefined;
    return { name: typeof code === 'string' ? code : clientCode };
  }
  if (!(cause instanceof Error)) return { name: 'Error', message: String(cause) };
  return { name: cause.name, message: cause.message, ...(cause.stack ? { stack: cause.stack } : {}) };
}

/** The span that failed says so: status ERROR, an exception event per error (the first few). */
export function recordErrors(span: Span, errors: readonly unknown[], clientCode?: string): void {
  const exceptions = errors.slice(0, MOST_RECORDED).map((error) => exceptionOf(error, clientCode));
  for (const exception of exceptions) span.recordException(exception);
  span.setStatus({ code: SpanStatusCode.ERROR, message: exceptions[0]?.name ?? 'error' });
}

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
 * Parse, validate and execute spans under the active span. `spans` goes early, to see operations
 * another plugin stops (the list-size limit); `activate` goes last, after useGraphQlJit (whose
 * onExecute replaces the execute function), so it wraps what really runs and records the errors
 * clients get. The two meet on the `args` object envelop hands every onExecute hook.
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
