import type { Logger } from 'pino';
import type RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { type LimiterStore, memoryLimiterStore } from './limiter-store.ts';
import {
  createPolicy,
  givePointBack,
  isRefusal,
  type Policy,
  payPoints,
  priceRefusal,
  type Rate,
  type Refusal,
  rateLimitFields,
  refusal,
} from './rate-limit-policy.ts';
import { createRedisLimiterStore } from './redis-limiter-store.ts';

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

function setRateLimitFields(policy: Policy, exchange: ChargedExchange, counted: RateLimiterRes) {
  for (const [name, value] of Object.entries(rateLimitFields(policy, counted))) exchange.setResponseHeader(name, value);
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
          return setRateLimitFields(keys, exchange, result);
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
          paid ? setRateLimitFields(keys, exchange, paid) : priceRefusal(keys, perKey.burst, cost, short),
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

/** Past this many blocked addresses, expired ones are swept before another is added. */
const BLOCKED_SWEEP_AT = 10_000;

/**
 * The failed-authentication limit per client address (limiterBucketOf's buckets). An address over it
 * has its missing and wrong keys refused at once by one Map read in this process, while a valid key
 * from it is served: one client behind a NAT or a balancer that guesses keys must not lock out its
 * neighbours. With a shared store the counts are the fleet's; the block list stays each instance's,
 * filled when its own count is refused, so the look-up never waits for a shared store.
 */
function failedAuthentications(failures: Policy | undefined, storeFailed: StoreFailed, logger: Logger) {
  const blockedUntil = new Map<string, { until: number; refusal: Refusal }>();

  /** Blocks `bucket` until its window ends; logged when the block starts. */
  function refused(bucket: string, address: string, reqId: string, policy: Policy, msBeforeNext: number) {
    const answer = refusal(policy, msBeforeNext, 'Too many failed authentications from this address');
    const now = Date.now();
    if (blockedUntil.size >= BLOCKED_SWEEP_AT) {
      for (const [other, { until }] of blockedUntil) if (until <= now) blockedUntil.delete(other);
    }
    const starts = (blockedUntil.get(bucket)?.until ?? 0) <= now;
    blockedUntil.set(bucket, { until: now + msBeforeNext, refusal: answer });
    if (starts) {
      const blockedFor = Number(answer.headers['Retry-After']);
      logger.warn(
        { clientAddress: address, bucket, reqId, blockedForSeconds: blockedFor },
        `client address blocked for ${blockedFor} s after too many failed authentications: its missing and wrong keys get 429, valid keys are still served`,
      );
    }
    return { headers: answer.headers, refusal: answer };
  }

  return {
    /** The refusal for a blocked bucket whose request brought no valid key, its Retry-After counting down. */
    blockedAddress(bucket: string): Refusal | undefined {
      if (blockedUntil.size === 0) return undefined;
      const blocked = blockedUntil.get(bucket);
      if (!blocked) return undefined;
      const left = blocked.until - Date.now();
      if (left > 0) {
        const retryAfter = String(Math.ceil(left / 1000));
        return { ...blocked.refusal, headers: { ...blocked.refusal.headers, 'Retry-After': retryAfter } };
      }
      blockedUntil.delete(bucket);
      return undefined;
    },

    /**
     * Counts a failed authentication of `bucket` (limiterBucketOf of `address`): the 401's RateLimit
     * fields, or a refusal once over the limit.
     */
    failedAuthentication(
      bucket: string,
      address: string,
      reqId: string,
    ): Promise<{ headers: Record<string, string>; refusal?: Refusal }> | undefined {
      if (!failures) return undefined;
      return failures.consume(bucket).then(
        (result) => ({ headers: rateLimitFields(failures, result) }),
        (rejected: unknown) => {
          if (!isRefusal(rejected)) return storeFailed(rejected, reqId) ?? { headers: {} };
          return refused(bucket, address, reqId, failures, rejected.msBeforeNext);
        },
      );
    },
  };
}

/**
 * The edge's rate limits. Per API key on every authenticated request, and on what a GraphQL request
 * runs beyond its first root field (charge); per client address on failed authentication.
 */
export function createRateLimits({ perKey, authFailures, logger, store = memoryLimiterStore }: RateLimitsOptions) {
  const keys = createPolicy('default', perKey, store);
  /** A store that fails must not take the API down: let the request through (Redis's falls back to memory first). */
  function storeFailed(error: unknown, reqId: string): undefined {
    logger.warn({ err: error, reqId }, 'rate limit store failed; request let through');
    return undefined;
  }
  // A 304's points back: as many per second as the key's quota holds, so polling within it spends nothing.
  const revalidations = keys && createPolicy('revalidations', { rate: keys.rate, burst: keys.rate }, store);

  return {
    ...failedAuthentications(createPolicy('auth-failures', authFailures, store), storeFailed, logger),
    ...keyPayments(keys, perKey, storeFailed, logger),

    /**
     * A 304 matched by an entity tag (conditional-get.ts; one matched by `*` saved no body) gives its
     * request's point back. It still ran its operation, so free revalidations without end would be a
     * way around the limit: past the key's revalidation allowance a 304 costs its point like any answer.
     * Only a point it paid: one let through by a failing store gives nothing back.
     */
    revalidated(exchange: ChargedExchange): Promise<undefined> | undefined {
      if (!exchange.pointPaid || !keys || !revalidations) return undefined;
      return revalidations
        .consume(exchange.keyId)
        .then(
          async () => {
            const after = await givePointBack(keys, exchange.keyId);
            return after ? setRateLimitFields(keys, exchange, after) : undefined;
          },
          (rejected: unknown) => {
            if (!isRefusal(rejected)) throw rejected;
            return undefined;
          },
        )
        .catch((error: unknown) => {
          logger.warn({ err: error, reqId: exchange.id }, 'rate limit store failed; a 304 kept its point');
          return undefined;
        });
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
  const shared = config.REDIS_URL
    ? createRedisLimiterStore({
        url: config.REDIS_URL,
        logger,
        onShared: metrics.setRateLimitStoreShared,
        onFallback: metrics.countRateLimitStoreFallback,
      })
    : undefined;
  // `store`: where other per-client counts go too (WebSocket upgrades per address).
  const store = shared?.store ?? memoryLimiterStore;
  return {
    rateLimits: createRateLimits({ ...rateLimitsOf(config), logger, store }),
    store,
    close: async () => shared?.close(),
  };
}
