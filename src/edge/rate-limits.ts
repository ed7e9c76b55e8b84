import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { createFailedAuthentications } from './failed-authentications.ts';
import { type LimiterStore, memoryLimiterStore } from './limiter-store.ts';

import {
  createPolicy,
  isRefusal,
  type Policy,
  payPoints,
  priceRefusal,
  type Rate,
  type Refusal,
  rateLimitField,
  refusal,
} from './rate-limit-policy.ts';
import { createRedisLimiterStore } from './redis-limiter-store.ts';
import { createRevalidationRefunds } from './revalidation-refunds.ts';

export type { Rate, Refusal } from './rate-limit-policy.ts';

export interface RateLimitSettings {
  /** Every authenticated request, per API key. */
  perKey: Rate;
  /** Failed authentications, per client address. */
  authFailures: Rate;
}

export interface RateLimitsOptions extends RateLimitSettings {
  logger: Logger;
  store?: LimiterStore;
}

/** What a charge needs of the exchange: its key, its id for the log, and where its RateLimit fields go. */
export interface ChargedExchange {
  keyId: string;
  id: string;
  setResponseHeader(name: string, value: string): void;
  /** Set once request() took the request's point: only then may a 304 give it back. */
  pointPaid?: boolean;
}

function setRateLimitFields(policy: Policy, exchange: ChargedExchange, remaining: number, msBeforeNext: number) {
  exchange.setResponseHeader('RateLimit-Policy', policy.policyField);
  exchange.setResponseHeader('RateLimit', rateLimitField(policy, remaining, msBeforeNext));
  return undefined;
}

/** A stream short of points asks again no sooner than this: the store is not polled in a loop. */
const MIN_STREAM_WAIT_MS = 50;

type StoreFailed = (error: unknown, reqId: string) => undefined;

/** What a key pays: its request's point, and the rest of a GraphQL request's price. */
function keyPayments(keys: Policy | undefined, perKey: Rate, storeFailed: StoreFailed, logger: Logger) {
  const overRate = `Too many requests for this API key (over ${perKey.rate} per second)`;
  return {
    /** Counts a request of this key (one point): sets its RateLimit fields, or gives the refusal. */
    request(exchange: ChargedExchange): Promise<Refusal | undefined> | undefined {
      return keys?.consume(exchange.keyId).then(
        (result) => {
          exchange.pointPaid = true;
          return setRateLimitFields(keys, exchange, result.remainingPoints, result.msBeforeNext);
        },
        (rejected: unknown) =>
          isRefusal(rejected) ? refusal(keys, rejected.msBeforeNext, overRate) : storeFailed(rejected, exchange.id),
      );
    },

    /**
     * Charges what a request runs beyond the point request() took: `cost` is its whole price. A price
     * the key cannot pay now spends nothing; one over the key's burst is refused whatever is left,
     * since no wait would let it through.
     */
    charge(exchange: ChargedExchange, cost: number): Promise<Refusal | undefined> | undefined {
      if (!keys || cost <= 1) return undefined;
      const overBurst = cost > perKey.burst;
      // Over the burst: only read what is left, for the RateLimit field.
      return payPoints(keys, exchange.keyId, overBurst ? Number.POSITIVE_INFINITY : cost - 1).then(
        ({ paid, short }) =>
          paid
            ? setRateLimitFields(keys, exchange, paid.remainingPoints, paid.msBeforeNext)
            : priceRefusal(keys, perKey.burst, cost, short),
        (error: unknown) => {
          if (!overBurst) return storeFailed(error, exchange.id);
          logger.warn({ err: error, reqId: exchange.id }, 'rate limit store failed; RateLimit left out of a refusal');
          return priceRefusal(keys, perKey.burst, cost);
        },
      );
    },

    /**
     * Takes `points` for work a stream does as it goes (a replay's pages): resolves to 0 once paid, or
     * to how long until the key's second quota is whole again when it cannot pay now (nothing spent).
     * With no limit, or a store that fails, 0: the work goes on, as a request would be let through.
     */
    streamPoints({ keyId, id }: Pick<ChargedExchange, 'keyId' | 'id'>, points: number): Promise<number> {
      if (!keys) return Promise.resolve(0);
      return payPoints(keys, keyId, points).then(
        ({ short }) => (short ? Math.max(MIN_STREAM_WAIT_MS, short.steadyMs) : 0),
        (error: unknown) => storeFailed(error, id) ?? 0,
      );
    },
  };
}

/**
 * The edge's rate limits. Per API key on every authenticated request, and on what a GraphQL request
 * runs beyond its first root field (charge); per client address on failed authentication
 * (failed-authentications.ts).
 */
export function createRateLimits({ perKey, authFailures, logger, store = memoryLimiterStore }: RateLimitsOptions) {
  const keys = createPolicy('default', perKey, store);
  /** A store that fails must not take the API down: let the request through (Redis's falls back to memory first). */
  function storeFailed(error: unknown, reqId: string): undefined {
    logger.warn({ err: error, reqId }, 'rate limit store failed; request let through');
    return undefined;
  }
  const failures = createFailedAuthentications({
    failures: createPolicy('auth-failures', authFailures, store),
    logger,
    storeFailed,
  });
  const refunds = keys && createRevalidationRefunds(keys, store);

  return {
    ...failures,
    ...keyPayments(keys, perKey, storeFailed, logger),

    /**
     * A 304's request (conditional-get.ts): its point back, within the key's revalidation allowance.
     * Only a point it paid: one let through by a failing store gives nothing back.
     */
    revalidated(exchange: ChargedExchange): Promise<undefined> | undefined {
      if (!exchange.pointPaid) return undefined;
      return refunds?.(exchange.keyId).then(
        (after) =>
          keys && after ? setRateLimitFields(keys, exchange, after.remainingPoints, after.msBeforeNext) : undefined,
        (error: unknown) =>
          void logger.warn({ err: error, reqId: exchange.id }, 'rate limit store failed; a 304 kept its point'),
      );
    },
  };
}

export type RateLimits = ReturnType<typeof createRateLimits>;

/** The rate limits of a configuration, as the edge takes them. */
export function rateLimitsOf(config: Config): RateLimitSettings {
  return {
    perKey: { rate: config.RATE_LIMIT_PER_KEY, burst: config.RATE_LIMIT_BURST },
    authFailures: { rate: config.AUTH_FAILURE_LIMIT, burst: config.AUTH_FAILURE_BURST },
  };
}

export interface ServiceRateLimitsOptions {
  config: Config;
  logger: Logger;
  metrics: Pick<Metrics, 'setRateLimitStoreShared' | 'countRateLimitStoreFallback'>;
}

/** The service's rate limits, counted in Redis for a fleet (REDIS_URL) or in this instance's memory. */
export function createServiceRateLimits({ config, logger, metrics }: ServiceRateLimitsOptions) {
  // The client connects in the background; until it is ready, and whenever Redis does not answer,
  // this instance counts alone.
  const sharedLimits = config.REDIS_URL
    ? createRedisLimiterStore({
        url: config.REDIS_URL,
        logger,
        onShared: metrics.setRateLimitStoreShared,
        onFallback: metrics.countRateLimitStoreFallback,
      })
    : undefined;
  const rateLimits = createRateLimits({
    ...rateLimitsOf(config),
    logger,
    ...(sharedLimits ? { store: sharedLimits.store } : {}),
  });
  // `store`: where other per-client counts go too (WebSocket upgrades per address).
  return { rateLimits, store: sharedLimits?.store ?? memoryLimiterStore, close: async () => sharedLimits?.close() };
}
