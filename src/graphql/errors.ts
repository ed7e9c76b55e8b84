import { createGraphQLError } from '@graphql-tools/utils';
import { GraphQLError } from 'graphql';
import {
  ClientGoneError,
  CorruptPetError,
  DatabaseUnavailableError,
  DomainError,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  InvalidIdempotencyKeyError,
  RETRY_AFTER_SECONDS,
} from '../errors.ts';

/** The `extensions.code` values this API puts on GraphQL errors. */
export const ErrorCode = {
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  IDEMPOTENCY_KEY_IN_USE: 'IDEMPOTENCY_KEY_IN_USE',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
  /** TRUSTED_DOCUMENTS=enforce: this key may run only published documents, by id. */
  PERSISTED_QUERY_ID_REQUIRED: 'PERSISTED_QUERY_ID_REQUIRED',
  /** The id names no published document. */
  PERSISTED_QUERY_NOT_IN_LIST: 'PERSISTED_QUERY_NOT_IN_LIST',
  /** Apollo's automatic persisted queries: no text is kept for this hash; the link resends it with the text. */
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  /** Apollo's automatic persisted queries: the hash sent with a text is not the text's SHA-256. */
  PERSISTED_QUERY_MISMATCH: 'PERSISTED_QUERY_MISMATCH',
  /** A document and an id in one request (Apollo's code for it). */
  CANNOT_SEND_PQ_ID_AND_BODY: 'CANNOT_SEND_PQ_ID_AND_BODY',
  /** A request Yoga's own checks would call malformed (its code, kept for ours of the same kind). */
  BAD_REQUEST: 'BAD_REQUEST',
  /** The key lacks the scope the operation needs (operation-admission.ts). */
  FORBIDDEN: 'FORBIDDEN',
  /** The operation costs more than the key has left, or than its burst (operation-admission.ts). */
  RATE_LIMITED: 'RATE_LIMITED',
  /** The key, or the instance, holds as many subscription streams as it may (subscriptions/follow-pets.ts). */
  TOO_MANY_SUBSCRIPTIONS: 'TOO_MANY_SUBSCRIPTIONS',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * The HTTP status in `extensions.http` (Yoga strips it from the body; REST reads it). `spec: true` keeps
 * `application/json` responses at 200, as GraphQL-over-HTTP asks; graphql-response+json gets the status.
 */
export interface HttpExtension {
  status: number;
  headers?: Record<string, string>;
  spec?: boolean;
}

/** An error with our `code` and its HTTP status, any other extensions between the two. */
export function codedError(
  message: string,
  code: string,
  http: HttpExtension,
  more?: Record<string, unknown>,
): GraphQLError {
  return createGraphQLError(message, { extensions: { code, ...more, http } });
}

/** `field` is the argument path (`input.name`); `reason` is the rule it broke, without the field. */
export function badUserInput(field: string, reason: string): GraphQLError {
  const message = `Invalid value for "${field}": ${reason}`;
  return codedError(message, ErrorCode.BAD_USER_INPUT, { status: 400, spec: true }, { field, reason });
}

export const unexpectedError = (): GraphQLError =>
  codedError('Unexpected error.', ErrorCode.INTERNAL_SERVER_ERROR, { status: 500, spec: true });

const retryAfter = (seconds: number) => ({ 'Retry-After': String(seconds) });

/**
 * A domain error as clients see it: its code, status and message. A client that has gone gets an
 * outage's 503: nobody reads it, but logs and metrics must not count it as a server fault.
 */
export function fromDomainError(error: DomainError): GraphQLError {
  const { message } = error;
  if (error instanceof DatabaseUnavailableError || error instanceof ClientGoneError) {
    const seconds = error instanceof DatabaseUnavailableError ? error.retryAfterSeconds : RETRY_AFTER_SECONDS;
    return codedError(message, ErrorCode.SERVICE_UNAVAILABLE, { status: 503, headers: retryAfter(seconds) });
  }
  // Both faces answer these with their status: a retrying client must tell "wait" from "new key".
  if (error instanceof IdempotencyKeyInUseError) {
    const headers = retryAfter(error.retryAfterSeconds);
    return codedError(message, ErrorCode.IDEMPOTENCY_KEY_IN_USE, { status: 409, headers });
  }
  if (error instanceof IdempotencyKeyReusedError)
    return codedError(message, ErrorCode.IDEMPOTENCY_KEY_REUSED, { status: 422 });
  // A header, not a variable: 400 on both faces, whatever the GraphQL response's media type.
  if (error instanceof InvalidIdempotencyKeyError) {
    const more = { field: 'Idempotency-Key', reason: error.reason };
    return codedError(message, ErrorCode.BAD_USER_INPUT, { status: 400 }, more);
  }
  if (error instanceof CorruptPetError) {
    return codedError(message, ErrorCode.INTERNAL_SERVER_ERROR, { status: 500, spec: true });
  }
  return unexpectedError();
}

/** Errors one GraphQL answer carries at most, before one "too many errors" entry (graphql-js's validation default is 100). */
export const MAX_ERRORS = 50;

/** The code of the entry that stands for the errors left out. */
export const TOO_MANY_ERRORS = 'TOO_MANY_ERRORS';

/** The entry that stands for the errors left out; the status stays the one the others set. */
export function tooManyErrors(): GraphQLError {
  return createGraphQLError(`Too many errors: only the first ${MAX_ERRORS} are reported`, {
    extensions: { code: TOO_MANY_ERRORS },
  });
}

/** At most MAX_ERRORS errors, then tooManyErrors(): an answer never grows with what a client sent. */
export function capErrors<R extends { errors?: readonly GraphQLError[] }>(result: R): R {
  const { errors } = result;
  if (!errors || errors.length <= MAX_ERRORS) return result;
  return { ...result, errors: [...errors.slice(0, MAX_ERRORS), tooManyErrors()] };
}

/** The error a resolver threw, under the GraphQLError graphql-js wrapped it in. */
export function rootCause(error: unknown): unknown {
  let current = error;
  while (current instanceof Error && 'originalError' in current && current.originalError)
    current = current.originalError;
  return current;
}

/** A GraphQLError all the way down: ours (zod rules, variables) or graphql-js's own, never a wrapped throw. */
export function isOwnGraphQLError(error: unknown): error is GraphQLError {
  if (!(error instanceof GraphQLError)) return false;
  return error.originalError == null || isOwnGraphQLError(error.originalError);
}

/** Our GraphQLErrors pass, domain errors get their code and status, anything else is a bug: "Unexpected error.". */
export const maskError = (error: unknown): GraphQLError => {
  if (!(error instanceof Error)) return unexpectedError();
  if (isOwnGraphQLError(error)) return error;
  const cause = rootCause(error);
  if (cause instanceof DomainError) return fromDomainError(cause);
  return unexpectedError();
};
