import type { HttpError } from '../http/send-json.ts';

const MISSING = 'An API key is required: send "Authorization: Bearer <API_KEY>"';
const INVALID = 'The API key is not valid';

/** Why a key was not admitted: the error (401 or 429) and the headers its answer carries. */
export interface KeyRefusal {
  error: HttpError;
  headers: Record<string, string>;
}

/**
 * RFC 6750 §3: name the scheme; flag a key that was sent but is wrong. The edge answers it, and a
 * subscription whose key went while its request arrived (subscriptions/follow-pets.ts).
 */
export function unauthenticated(keyWasSent: boolean, headers?: Record<string, string>): KeyRefusal {
  const challenge = keyWasSent ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"';
  const error = { status: 401, code: 'UNAUTHENTICATED', message: keyWasSent ? INVALID : MISSING };
  return { error, headers: { ...headers, 'WWW-Authenticate': challenge } };
}
