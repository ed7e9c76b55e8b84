import type { GraphQLError } from 'graphql';
import type { HttpError } from '../http/send-error.ts';
import { NEW_PET_FIELD_ORDER } from '../pets/pet-rules.ts';

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
    /** The parameter or body field a BAD_USER_INPUT is about. */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'RestError';
    this.status = REST_ERRORS[code];
  }
}

export function invalidParameter(name: string, reason: string): RestError {
  return new RestError('BAD_USER_INPUT', `Invalid value for "${name}": ${reason}`, {}, name);
}

/** The contract's wording of a reason GraphQL gave for a field (the field by its contract name). */
type RestReason = (restField: string, reason: string) => string;

const unexpected = () => new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.');

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
  restReason: RestReason = (_field, reason) => reason,
): RestError {
  const { code, field, reason, http } = error.extensions as {
    code?: unknown;
    field?: unknown;
    reason?: unknown;
    http?: { status?: unknown; headers?: unknown };
  };
  if (!isRestCode(code) || http?.status !== REST_ERRORS[code]) return unexpected();
  if (code === 'BAD_USER_INPUT' && typeof field === 'string' && typeof reason === 'string') {
    const name = restField(field);
    return invalidParameter(name, restReason(name, reason));
  }
  return new RestError(code, error.message, stringHeaders(http.headers));
}

/** Where a REST field comes in a message: NewPet's contract order first, any other field after it. */
function fieldRank(field: string): number {
  const index = (NEW_PET_FIELD_ORDER as readonly string[]).indexOf(field);
  return index === -1 ? NEW_PET_FIELD_ORDER.length : index;
}

const byContractOrder = (a: string, b: string) => fieldRank(a) - fieldRank(b) || (a < b ? -1 : a > b ? 1 : 0);

/**
 * The REST Error for an operation's GraphQL errors. When each names an invalid field, one 400 names
 * them all, in the contract's field order (others after, by name), whatever order the body gave
 * them in: `Invalid value for "name": is required; Invalid value for "categoryId": is required`.
 */
export function restErrorFromGraphQLErrors(
  errors: readonly GraphQLError[],
  restField: (graphqlPath: string) => string = (path) => path,
  restReason?: RestReason,
): RestError {
  const invalid = errors.map((error) => restErrorFromGraphQL(error, restField, restReason));
  if (invalid.length < 2 || invalid.some((error) => error.field === undefined)) return invalid[0] ?? unexpected();
  const ordered = invalid.toSorted((a, b) => byContractOrder(a.field as string, b.field as string));
  return new RestError('BAD_USER_INPUT', ordered.map((error) => error.message).join('; '));
}
