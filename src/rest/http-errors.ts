import type { GraphQLError } from 'graphql';
import { TOO_MANY_ERRORS } from '../graphql/errors.ts';
import { UNKNOWN_FIELD_REASON } from '../graphql/variable-errors.ts';
import type { HttpError } from '../http/send-json.ts';

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

/** Characters of a field's name, and of a reason, that a message repeats: it never grows with the body. */
const NAME_SHOWN = 40;
const REASON_SHOWN = 200;
/** Unknown fields a message names before it only counts the rest. */
const UNKNOWN_FIELDS_NAMED = 3;

/** At most `max` UTF-16 units, ending in … when cut, never between the halves of a surrogate pair. */
function shortened(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 2);
  const end = last >= 0xd800 && last <= 0xdbff ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

/** The name is quoted as JSON: a key with quotes or line breaks cannot pass for another field's message. */
export function invalidParameter(name: string, reason: string): RestError {
  const message = `Invalid value for ${JSON.stringify(shortened(name, NAME_SHOWN))}: ${shortened(reason, REASON_SHOWN)}`;
  return new RestError('BAD_USER_INPUT', message, {}, name);
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

/**
 * The REST Error for an operation's GraphQL errors. When each names an invalid field, one 400 names
 * them all in the order GraphQL gives them (the input type's own fields in the contract's order, then
 * the keys it does not have), the unknown ones only the first few, then counted:
 * `Invalid value for "name": is required; Invalid value for "a": is not a known field; and 9 more unknown fields`.
 * The "too many errors" entry only says the count is a lower bound: it never stands for a field.
 */
export function restErrorFromGraphQLErrors(
  errors: readonly GraphQLError[],
  restField: (graphqlPath: string) => string = (path) => path,
  restReason?: RestReason,
): RestError {
  const tooMany = errors.find((error) => error.extensions?.code === TOO_MANY_ERRORS);
  const reported = tooMany ? errors.filter((error) => error !== tooMany) : errors;
  const invalid = reported.map((error) => restErrorFromGraphQL(error, restField, restReason));
  if ((invalid.length < 2 && !tooMany) || invalid.some((error) => error.field === undefined)) {
    return invalid[0] ?? unexpected();
  }
  const isUnknown = (index: number) => reported[index]?.extensions?.reason === UNKNOWN_FIELD_REASON;
  const unknown = invalid.filter((_, index) => isUnknown(index));
  const named = [...invalid.filter((_, index) => !isUnknown(index)), ...unknown.slice(0, UNKNOWN_FIELDS_NAMED)];
  const parts = named.map((error) => error.message);
  const more = unknown.length - UNKNOWN_FIELDS_NAMED;
  if (more > 0) parts.push(`and ${tooMany ? 'at least ' : ''}${more} more unknown field${more === 1 ? '' : 's'}`);
  else if (tooMany) parts.push(tooMany.message);
  return new RestError('BAD_USER_INPUT', parts.join('; '));
}
