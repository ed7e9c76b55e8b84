import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { GraphQLError } from 'graphql';
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
 * What a span may say about an error. A client's mistake gives its code only: the messages of
 * GraphQL's own errors quote the document or a variable's value. An operating condition gives our
 * message; a bug its message and stack, as the error log does.
 */
export function exceptionOf(error: unknown, clientCode = 'GRAPHQL_ERROR'): RecordedException {
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
