import type { GraphQLError } from 'graphql';

/** The closed set of `code` values of REST Error bodies, each with its one HTTP status. */
export const REST_ERRORS = {
  BAD_USER_INPUT: 400,
  INVALID_JSON: 400,
  UNAUTHENTICATED: 401,
  PET_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;
export type RestErrorCode = keyof typeof REST_ERRORS;

/** A request the adapter refuses before or instead of running an operation. */
export class RestError extends Error {
  constructor(
    readonly code: RestErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'RestError';
  }

  toResponse(extraHeaders: Record<string, string> = {}): Response {
    const status = REST_ERRORS[this.code];
    return Response.json(
      { code: this.code, message: this.message, status },
      { status, headers: { ...this.headers, ...extraHeaders } },
    );
  }
}

export function invalidParameter(name: string, reason: string): RestError {
  return new RestError('BAD_USER_INPUT', `Invalid value for "${name}": ${reason}`);
}

/** Renames a GraphQL argument path (`input.name`, `first`) to the REST name (`name`, `limit`). */
function restFieldName(field: string, renames: Readonly<Record<string, string>>): string {
  const [head = '', ...rest] = field.split('.');
  const renamed = renames[head] ?? head;
  return [renamed, ...rest].filter((part) => part !== '').join('.') || 'body';
}

function stringHeaders(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** GraphQL error codes become HTTP statuses here and nowhere else. */
export function restErrorFromGraphQL(error: GraphQLError, renames: Readonly<Record<string, string>> = {}): RestError {
  const { code, field, reason, http } = error.extensions as Record<string, unknown>;
  const headers = stringHeaders((http as { headers?: unknown } | undefined)?.headers);
  switch (code) {
    case 'BAD_USER_INPUT':
      return typeof field === 'string' && typeof reason === 'string'
        ? invalidParameter(restFieldName(field, renames), reason)
        : new RestError('BAD_USER_INPUT', error.message);
    case 'UNAUTHENTICATED':
      return new RestError('UNAUTHENTICATED', error.message, headers);
    case 'SERVICE_UNAVAILABLE':
      return new RestError('SERVICE_UNAVAILABLE', error.message, headers);
    default:
      // Whatever reached here was already masked and logged by Yoga.
      return new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.');
  }
}
