import type { ServerResponse } from 'node:http';
import { sendJson } from '../http/send-json.ts';

export type Face = 'graphql' | 'rest';

const MISSING = 'An API key is required: send "Authorization: Bearer <API_KEY>"';
const INVALID = 'The API key is not valid';

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
  const body =
    face === 'graphql'
      ? { errors: [{ message, extensions: { code: 'UNAUTHENTICATED' } }] }
      : { code: 'UNAUTHENTICATED', message, status: 401 };
  sendJson(res, 401, body, headers);
}
