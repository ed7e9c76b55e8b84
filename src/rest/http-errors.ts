import type { GraphQLError } from 'graphql';
import type { HttpError } from '../http/send-error.ts';

/** The closed set of `code` values of REST Error bodies, each with its one HTTP status. */
export const REST_ERRORS = {
  BAD_USER_INPUT: 400,
  INVALID_JSON: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  PET_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_KEY_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;
export type RestErrorCode = keyof typeof REST_ERRORS;

/** A request the adapter refuses before or instead of running an operation. */
export class RestError extends Error implements HttpError {
  readonly status: number;

  constructor(
    readonly code: RestErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'RestError';
    this.status = REST_ERRORS[code];
  }
}

export function invalidParameter(name: string, reason: string): RestError {
  return new RestError('BAD_USER_INPUT', `Invalid value for "${name}": ${reason}`);
}

function stringHeaders(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function isRestCode(code: unknown): code is RestErrorCode {
  return typeof code === 'string' && code in REST_ERRORS;
}

/**
 * A GraphQL error as a REST Error: its code and the status it carries in `extensions.http`. A code
 * outside the contract's set, or a status that disagrees with it, is a bug: 500, already logged.
 */
export function restErrorFromGraphQL(
  error: GraphQLError,
  restField: (graphqlPath: string) => string = (path) => path,
): RestError {
  const { code, field, reason, http } = error.extensions as {
    code?: unknown;
    field?: unknown;
    reason?: unknown;
    http?: { status?: unknown; headers?: unknown };
  };
  if (!isRestCode(code) || http?.status !== REST_ERRORS[code])
    return new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.');
  if (code === 'BAD_USER_INPUT' && typeof field === 'string' && typeof reason === 'string') {
    return invalidParameter(restField(field), reason);
  }
  return new RestError(code, error.message, stringHeaders(http.headers));
}
