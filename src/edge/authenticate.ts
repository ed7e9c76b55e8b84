import type { ApiKeyVerifier } from '../auth/api-keys.ts';
import type { RequestScope } from '../http/request-scope.ts';
import { sendError } from '../http/send-error.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { ClientAddress } from './client-address.ts';
import type { RateLimits, Refusal } from './rate-limits.ts';

const MISSING = 'An API key is required: send "Authorization: Bearer <API_KEY>"';
const INVALID = 'The API key is not valid';

/** True: go on. False: answered already (401 or 429). A promise of either when a limit store was asked. */
export type Admission = boolean | Promise<boolean>;

/** 429 in the face's body shape, with Retry-After and the RateLimit fields of the refusing policy. */
function sendRateLimited(scope: RequestScope, refusal: Refusal): false {
  sendError(scope.res, scope.face, { status: 429, code: 'RATE_LIMITED', message: refusal.message }, refusal.headers);
  return false;
}

/** RFC 6750 §3: name the scheme; flag a key that was sent but is wrong. */
function sendUnauthenticated(scope: RequestScope, keyWasSent: boolean, headers?: Record<string, string>): false {
  const challenge = keyWasSent ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"';
  const error = { status: 401, code: 'UNAUTHENTICATED', message: keyWasSent ? INVALID : MISSING };
  sendError(scope.res, scope.face, error, { ...headers, 'WWW-Authenticate': challenge });
  return false;
}

/**
 * Rate limits and the API key, once per request on routes that need a key: the client address's
 * limit on failed authentication first (so guessing keys gets 429), then the key, then its own
 * limit. Sets the scope's key id.
 */
export function createAuthentication(options: {
  verifyApiKey: ApiKeyVerifier;
  rateLimits: RateLimits;
  metrics: Metrics;
  /** Whose failed authentications count together: the socket's peer, or the client behind trusted proxies. */
  clientAddress: ClientAddress;
}) {
  const { verifyApiKey, rateLimits, metrics, clientAddress } = options;

  function refuse(scope: RequestScope, keyWasSent: boolean, address: string): Admission {
    metrics.countAuthFailure(keyWasSent ? 'invalid' : 'missing');
    const counted = rateLimits.failedAuthentication(address, scope.id);
    if (!counted) return sendUnauthenticated(scope, keyWasSent);
    return counted.then(({ headers, refusal }) => {
      if (!refusal) return sendUnauthenticated(scope, keyWasSent, headers);
      metrics.countRateLimited('auth_failures');
      return sendRateLimited(scope, refusal);
    });
  }

  return function authenticate(scope: RequestScope): Admission {
    const address = clientAddress(scope.req);
    const blocked = rateLimits.blockedAddress(address);
    if (blocked) {
      metrics.countRateLimited('auth_failures');
      return sendRateLimited(scope, blocked);
    }
    const auth = verifyApiKey(scope.req.headers.authorization ?? null);
    if (!auth.ok) return refuse(scope, auth.keyWasSent, address);
    scope.keyId = auth.keyId;
    scope.arbitraryDocuments = auth.arbitraryDocuments;
    const counted = rateLimits.request(auth.keyId, scope.res, scope.id);
    if (!counted) return true;
    return counted.then((refusal) => {
      if (!refusal) return true;
      metrics.countRateLimited('per_key');
      return sendRateLimited(scope, refusal);
    });
  };
}
