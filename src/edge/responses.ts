import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { sendJson } from '../http/send-json.ts';
import type { Refusal } from './rate-limits.ts';

export type Face = 'graphql' | 'rest';

const MISSING = 'An API key is required: send "Authorization: Bearer <API_KEY>"';
const INVALID = 'The API key is not valid';

/** An error the edge answers on /graphql itself, shaped as a GraphQL response. */
export function sendGraphQLError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: OutgoingHttpHeaders = {},
): void {
  sendJson(res, status, { errors: [{ message, extensions: { code } }] }, headers);
}

/** An error the edge answers itself, in the body shape of the face that was called. */
export function sendFaceError(
  res: ServerResponse,
  face: Face,
  status: number,
  code: string,
  message: string,
  headers: OutgoingHttpHeaders = {},
): void {
  if (face === 'graphql') sendGraphQLError(res, status, code, message, headers);
  else sendJson(res, status, { code, message, status }, headers);
}

/**
 * The one 401 of the service, in the body shape of the face that was called: a GraphQL response for
 * /graphql, the contract's Error body elsewhere. RFC 6750 §3: name the scheme; flag a key that was
 * sent but is wrong.
 */
export function sendUnauthenticated(
  res: ServerResponse,
  face: Face,
  keyWasSent: boolean,
  extraHeaders: Record<string, string> = {},
): void {
  const message = keyWasSent ? INVALID : MISSING;
  const headers = {
    ...extraHeaders,
    'WWW-Authenticate': keyWasSent ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"',
  };
  sendFaceError(res, face, 401, 'UNAUTHENTICATED', message, headers);
}

/** 429 in the face's body shape, with Retry-After and the RateLimit fields of the refusing policy. */
export function sendRateLimited(
  res: ServerResponse,
  face: Face,
  refusal: Refusal,
  extraHeaders: Record<string, string> = {},
): void {
  sendFaceError(res, face, 429, 'RATE_LIMITED', refusal.message, { ...extraHeaders, ...refusal.headers });
}
