import { createGraphQLError } from '@graphql-tools/utils';
import type { GraphQLError } from 'graphql';

/** The `extensions.code` values this API puts on GraphQL errors. */
export const ErrorCode = {
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** `field` is the argument path (`input.name`); `reason` is the rule it broke, without the field. */
export function badUserInput(field: string, reason: string): GraphQLError {
  return createGraphQLError(`Invalid value for "${field}": ${reason}`, {
    extensions: { code: ErrorCode.BAD_USER_INPUT, field, reason },
  });
}

export function unauthenticated(keyWasSent: boolean): GraphQLError {
  // RFC 6750 §3: say which scheme to use, and flag a key that was sent but is wrong.
  const challenge = keyWasSent ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"';
  const message = keyWasSent ? 'The API key is not valid' : 'An API key is required: send "Authorization: Bearer <API_KEY>"';
  return createGraphQLError(message, {
    extensions: {
      code: ErrorCode.UNAUTHENTICATED,
      http: { status: 401, headers: { 'WWW-Authenticate': challenge } },
    },
  });
}

export function serviceUnavailable(): GraphQLError {
  return createGraphQLError('The database is unavailable; try again shortly', {
    extensions: { code: ErrorCode.SERVICE_UNAVAILABLE, http: { status: 503, headers: { 'Retry-After': '5' } } },
  });
}
