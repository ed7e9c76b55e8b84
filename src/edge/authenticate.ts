import type { IncomingMessage } from 'node:http';
import { type ApiKeyVerifier, type KeyRefusal, unauthenticated } from '../auth/api-keys.ts';
import type { Scopes } from '../auth/scopes.ts';
import type { Exchange } from '../http/exchange.ts';
import { sendError } from '../http/send-json.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { type ClientAddress, limiterBucketOf } from './client-address.ts';
import type { ChargedExchange, RateLimits, Refusal } from './rate-limits.ts';

/** True: go on. False: answered already (401 or 429). A promise of either when a limit store was asked. */
export type Admission = boolean | Promise<boolean>;

/** True: admitted. A promise of either when a limit store was asked. */
export type KeyCheck = true | KeyRefusal | Promise<true | KeyRefusal>;

/** What the key check reads and sets: the request (its client address), and the key's id, scopes and rights. */
export interface KeyedExchange extends ChargedExchange {
  readonly req: IncomingMessage;
  clientAddress: string;
  arbitraryDocuments: boolean;
  scopes: Scopes;
}

const rateLimited = (refusal: Refusal): KeyRefusal => ({
  error: { status: 429, code: 'RATE_LIMITED', message: refusal.message },
  headers: refusal.headers,
});

export interface AuthenticationOptions {
  verifyApiKey: ApiKeyVerifier;
  rateLimits: RateLimits;
  metrics: Metrics;
  /** Whose failed authentications count together: the socket's peer, or the client behind trusted proxies. */
  clientAddress: ClientAddress;
}

/**
 * The API key and the rate limits, answering nothing: the key first, then its own limit (one point).
 * Only a missing or wrong key meets the client address's limit on failed authentication (401, then
 * 429 while the address is blocked): a valid key is served from a blocked address too, so one
 * guesser behind a NAT or a balancer does not lock out its neighbours. Sets the exchange's key id,
 * scopes and client address. HTTP requests (createAuthentication) and WebSocket connections
 * (their `connection_init` carries the key) both ask it.
 */
export function createKeyCheck(options: AuthenticationOptions) {
  const { verifyApiKey, rateLimits, metrics, clientAddress } = options;

  function refuse(exchange: KeyedExchange, keyWasSent: boolean): KeyCheck {
    const bucket = limiterBucketOf(exchange.clientAddress);
    const blocked = rateLimits.blockedAddress(bucket);
    if (blocked) {
      metrics.countRateLimited('auth_failures');
      return rateLimited(blocked);
    }
    metrics.countAuthFailure(keyWasSent ? 'invalid' : 'missing');
    const counted = rateLimits.failedAuthentication(bucket, exchange.clientAddress, exchange.id);
    if (!counted) return unauthenticated(keyWasSent);
    return counted.then(({ headers, refusal }) => {
      if (!refusal) return unauthenticated(keyWasSent, headers);
      metrics.countRateLimited('auth_failures');
      return rateLimited(refusal);
    });
  }

  return function checkKey(exchange: KeyedExchange, authorization: string | null): KeyCheck {
    exchange.clientAddress = clientAddress(exchange.req);
    // A header that authenticated before is one Map read in the key ring: the hot path stays cheap.
    const auth = verifyApiKey(authorization);
    if (!auth.ok) return refuse(exchange, auth.keyWasSent);
    exchange.keyId = auth.keyId;
    exchange.arbitraryDocuments = auth.arbitraryDocuments;
    exchange.scopes = auth.scopes;
    const counted = rateLimits.request(exchange);
    if (!counted) return true;
    return counted.then((refusal) => {
      if (!refusal) return true;
      metrics.countRateLimited('per_key');
      return rateLimited(refusal);
    });
  };
}

/** A refusal answered in the face's body shape (429 with Retry-After and the RateLimit fields). */
function answered(exchange: Exchange, checked: true | KeyRefusal): boolean {
  if (checked === true) return true;
  sendError(exchange.res, exchange.face, checked.error, checked.headers);
  return false;
}

/** The key check once per request on routes that need a key, from the Authorization header; refusals answered. */
export function createAuthentication(options: AuthenticationOptions) {
  const checkKey = createKeyCheck(options);
  return function authenticate(exchange: Exchange): Admission {
    const checked = checkKey(exchange, exchange.req.headers.authorization ?? null);
    if (checked === true) return true;
    if (checked instanceof Promise) return checked.then((outcome) => answered(exchange, outcome));
    return answered(exchange, checked);
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
