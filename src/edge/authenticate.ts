import type { ApiKeyVerifier } from '../auth/api-keys.ts';
import type { Exchange } from '../http/exchange.ts';
import { sendError } from '../http/send-error.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { type ClientAddress, limiterBucketOf } from './client-address.ts';
import type { ChargedExchange, RateLimits, Refusal } from './rate-limits.ts';

const MISSING = 'An API key is required: send "Authorization: Bearer <API_KEY>"';
const INVALID = 'The API key is not valid';

/** True: go on. False: answered already (401 or 429). A promise of either when a limit store was asked. */
export type Admission = boolean | Promise<boolean>;

/** 429 in the face's body shape, with Retry-After and the RateLimit fields of the refusing policy. */
function sendRateLimited(exchange: Exchange, refusal: Refusal): false {
  sendError(
    exchange.res,
    exchange.face,
    { status: 429, code: 'RATE_LIMITED', message: refusal.message },
    refusal.headers,
  );
  return false;
}

/** RFC 6750 §3: name the scheme; flag a key that was sent but is wrong. */
function sendUnauthenticated(exchange: Exchange, keyWasSent: boolean, headers?: Record<string, string>): false {
  const challenge = keyWasSent ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"';
  const error = { status: 401, code: 'UNAUTHENTICATED', message: keyWasSent ? INVALID : MISSING };
  sendError(exchange.res, exchange.face, error, { ...headers, 'WWW-Authenticate': challenge });
  return false;
}

/**
 * The API key and the rate limits, once per request on routes that need a key: the key first, then
 * its own limit. Only a missing or wrong key meets the client address's limit on failed
 * authentication (401, then 429 while the address is blocked): a valid key is served from a blocked
 * address too, so one guesser behind a NAT or a balancer does not lock out its neighbours. Sets the
 * exchange's key id, scopes and client address (the access log names it on a 401 or 429).
 */
export function createAuthentication(options: {
  verifyApiKey: ApiKeyVerifier;
  rateLimits: RateLimits;
  metrics: Metrics;
  /** Whose failed authentications count together: the socket's peer, or the client behind trusted proxies. */
  clientAddress: ClientAddress;
}) {
  const { verifyApiKey, rateLimits, metrics, clientAddress } = options;

  function refuse(exchange: Exchange, keyWasSent: boolean): Admission {
    const bucket = limiterBucketOf(exchange.clientAddress);
    const blocked = rateLimits.blockedAddress(bucket);
    if (blocked) {
      metrics.countRateLimited('auth_failures');
      return sendRateLimited(exchange, blocked);
    }
    metrics.countAuthFailure(keyWasSent ? 'invalid' : 'missing');
    const counted = rateLimits.failedAuthentication(bucket, exchange.clientAddress, exchange.id);
    if (!counted) return sendUnauthenticated(exchange, keyWasSent);
    return counted.then(({ headers, refusal }) => {
      if (!refusal) return sendUnauthenticated(exchange, keyWasSent, headers);
      metrics.countRateLimited('auth_failures');
      return sendRateLimited(exchange, refusal);
    });
  }

  return function authenticate(exchange: Exchange): Admission {
    exchange.clientAddress = clientAddress(exchange.req);
    // A header that authenticated before is one Map read in the key ring: the hot path stays cheap.
    const auth = verifyApiKey(exchange.req.headers.authorization ?? null);
    if (!auth.ok) return refuse(exchange, auth.keyWasSent);
    exchange.keyId = auth.keyId;
    exchange.arbitraryDocuments = auth.arbitraryDocuments;
    exchange.scopes = auth.scopes;
    const counted = rateLimits.request(exchange);
    if (!counted) return true;
    return counted.then((refusal) => {
      if (!refusal) return true;
      metrics.countRateLimited('per_key');
      return sendRateLimited(exchange, refusal);
    });
  };
}

/**
 * What a GraphQL request runs beyond its first root field, charged to its key before anything runs
 * (operation-admission.ts calls it); a refusal is counted as the edge's per-key refusals are.
 */
export function createRequestCharges(rateLimits: RateLimits, metrics: Metrics) {
  return (exchange: ChargedExchange, cost: number): Promise<Refusal | undefined> | undefined =>
    rateLimits.charge(exchange, cost)?.then((refusal) => {
      if (refusal) metrics.countRateLimited('per_key');
      return refusal;
    });
}
