import type { Logger } from 'pino';
import BurstyRateLimiter from 'rate-limiter-flexible/lib/BurstyRateLimiter.js';
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import { type LimiterStore, memoryLimiterStore } from './limiter-store.ts';

/** Requests per second, sustained, and the most in one second; a rate of 0 turns the limit off. */
export interface Rate {
  rate: number;
  burst: number;
}

export interface RateLimitSettings {
  /** Every authenticated request, per API key. */
  perKey: Rate;
  /** Failed authentications, per client address. */
  authFailures: Rate;
}

/** A request the limits refuse: 429 with these headers. */
export interface Refusal {
  message: string;
  headers: Record<string, string>;
}

/** The burst allowance (burst - rate points) refills once per this window. */
export const BURST_WINDOW_SECONDS = 10;
/** Past this many blocked addresses, expired ones are swept before another is added. */
const BLOCKED_SWEEP_AT = 10_000;

interface Policy {
  consume(key: string): Promise<RateLimiterRes>;
  /** What is left of the key's sustained quota now, without spending (null: nothing spent in this window). */
  get(key: string): Promise<RateLimiterRes | null>;
  /** The `RateLimit-Policy` field: the sustained quota (bursts are an allowance, not a quota). */
  policyField: string;
  name: string;
}

/**
 * A fixed one-second window of `rate` points, backed by a burst allowance of `burst - rate` points per
 * BURST_WINDOW_SECONDS (rate-limiter-flexible's BurstyRateLimiter): at most `burst` in any one
 * second, about `rate` sustained, one counter read per request while under the rate.
 */
function createPolicy(name: string, { rate, burst }: Rate, store: LimiterStore): Policy | undefined {
  if (rate <= 0) return undefined;
  const steady = store({ keyPrefix: `rl-${name}`, points: rate, duration: 1 });
  const extra = burst - rate;
  const limiter =
    extra > 0
      ? new BurstyRateLimiter(
          steady,
          store({ keyPrefix: `rl-${name}-burst`, points: extra, duration: BURST_WINDOW_SECONDS }),
        )
      : steady;
  return {
    consume: (key) => limiter.consume(key),
    get: (key) => steady.get(key),
    policyField: `"${name}";q=${rate};w=1`,
    name,
  };
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

function rateLimitFields(policy: Policy, result: RateLimiterRes): Record<string, string> {
  return {
    'RateLimit-Policy': policy.policyField,
    RateLimit: `"${policy.name}";r=${result.remainingPoints};t=${seconds(result.msBeforeNext)}`,
  };
}

function refusal(policy: Policy, result: RateLimiterRes, message: string): Refusal {
  const retryAfter = Math.max(1, seconds(result.msBeforeNext));
  return {
    message: `${message}; retry after ${retryAfter} s`,
    headers: {
      'Retry-After': String(retryAfter),
      'RateLimit-Policy': policy.policyField,
      RateLimit: `"${policy.name}";r=0;t=${retryAfter}`,
    },
  };
}

/**
 * Client addresses (limiterBucketOf's buckets) over their failed-authentication limit, whose missing
 * and wrong keys are refused with one Map read until their window ends.
 */
function createBlockList() {
  const blockedUntil = new Map<string, { until: number; refusal: Refusal }>();
  return {
    /** True when the bucket was not blocked already: a block starts. */
    block(bucket: string, result: RateLimiterRes, answer: Refusal): boolean {
      const now = Date.now();
      if (blockedUntil.size >= BLOCKED_SWEEP_AT) {
        for (const [other, { until }] of blockedUntil) if (until <= now) blockedUntil.delete(other);
      }
      const starts = (blockedUntil.get(bucket)?.until ?? 0) <= now;
      blockedUntil.set(bucket, { until: now + result.msBeforeNext, refusal: answer });
      return starts;
    },
    refusalFor(address: string): Refusal | undefined {
      if (blockedUntil.size === 0) return undefined;
      const blocked = blockedUntil.get(address);
      if (!blocked) return undefined;
      const left = blocked.until - Date.now();
      if (left > 0) {
        const retryAfter = String(Math.max(1, seconds(left)));
        return { ...blocked.refusal, headers: { ...blocked.refusal.headers, 'Retry-After': retryAfter } };
      }
      blockedUntil.delete(address);
      return undefined;
    },
  };
}

export interface RateLimitsOptions extends RateLimitSettings {
  logger: Logger;
  store?: LimiterStore;
}

/** What a charge needs of a request: its key, its id for the log, and where its RateLimit fields go. */
export interface ChargedRequest {
  keyId: string;
  id: string;
  setResponseHeader(name: string, value: string): void;
}

/**
 * The edge's rate limits. Per API key on every authenticated request, and on what a GraphQL request
 * runs beyond its first root field (charge); per client address on failed authentication. An address
 * over that limit has its missing and wrong keys refused at once (a synchronous look-up in this
 * process, so that costs one Map read), while a valid key from it is served: one client behind a NAT
 * or a balancer that guesses keys must not lock out its neighbours. With a shared store the counts
 * are the fleet's; that block list stays each instance's, filled when its own count is refused.
 */
export function createRateLimits({ perKey, authFailures, logger, store = memoryLimiterStore }: RateLimitsOptions) {
  const keys = createPolicy('default', perKey, store);
  const failures = createPolicy('auth-failures', authFailures, store);
  const blocked = createBlockList();
  const overRate = `Too many requests for this API key (over ${perKey.rate} per second)`;

  /** A store that fails must not take the API down: let the request through (Redis's falls back to memory first). */
  function storeFailed(error: unknown, reqId: string): undefined {
    logger.warn({ err: error, reqId }, 'rate limit store failed; request let through');
    return undefined;
  }

  /**
   * Spends a key's points: its RateLimit fields for the answer, or the refusal. Several points go one
   * at a time (together), since BurstyRateLimiter takes a whole consume from the second's quota or
   * from the burst allowance, never from both: a price up to the burst can then be paid from both.
   */
  function spend(policy: Policy, request: ChargedRequest, points: number): Promise<Refusal | undefined> {
    const { keyId } = request;
    const spent =
      points === 1
        ? policy.consume(keyId)
        : Promise.all(Array.from({ length: points }, () => policy.consume(keyId))).then((results) =>
            results.reduce((least, result) => (result.remainingPoints < least.remainingPoints ? result : least)),
          );
    return spent.then(
      (result) => {
        request.setResponseHeader('RateLimit-Policy', policy.policyField);
        request.setResponseHeader(
          'RateLimit',
          `"${policy.name}";r=${result.remainingPoints};t=${seconds(result.msBeforeNext)}`,
        );
        return undefined;
      },
      (rejected: unknown) => {
        if (!(rejected instanceof RateLimiterRes)) return storeFailed(rejected, request.id);
        return refusal(policy, rejected, overRate);
      },
    );
  }

  /**
   * A request that costs more than a key may ever spend in one second: no wait lets it through, and
   * nothing is spent. Its RateLimit field says what is left; it is left out when the store cannot say.
   */
  function overBurst(policy: Policy, request: ChargedRequest, cost: number): Promise<Refusal> {
    const message =
      `This request costs ${cost} points (one per root field it runs), more than an API key may spend ` +
      `in one second (${perKey.burst}): send it as several smaller requests`;
    const answer = refusal(policy, new RateLimiterRes(0, 1000), message);
    return policy.get(request.keyId).then(
      (left) => {
        const remaining = left?.remainingPoints ?? perKey.rate;
        answer.headers.RateLimit = `"${policy.name}";r=${remaining};t=${seconds(left?.msBeforeNext ?? 1000)}`;
        return answer;
      },
      (error: unknown) => {
        logger.warn({ err: error, reqId: request.id }, 'rate limit store failed; RateLimit left out of a refusal');
        delete answer.headers.RateLimit;
        return answer;
      },
    );
  }

  return {
    /** The refusal for a blocked bucket (limiterBucketOf) whose request brought no valid key. */
    blockedAddress: blocked.refusalFor,

    /**
     * Counts a failed authentication of `bucket` (limiterBucketOf of `address`): the 401's RateLimit
     * fields, or a refusal once over the limit, when the bucket's block starts (logged once).
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
          if (!(rejected instanceof RateLimiterRes)) return storeFailed(rejected, reqId) ?? { headers: {} };
          const answer = refusal(failures, rejected, 'Too many failed authentications from this address');
          if (blocked.block(bucket, rejected, answer)) {
            const blockedFor = Number(answer.headers['Retry-After']);
            logger.warn(
              { clientAddress: address, bucket, reqId, blockedForSeconds: blockedFor },
              `client address blocked for ${blockedFor} s after too many failed authentications: its missing and wrong keys get 429, valid keys are still served`,
            );
          }
          return { headers: answer.headers, refusal: answer };
        },
      );
    },

    /** Counts a request of this key (one point): sets its RateLimit fields, or gives the refusal. */
    request(request: ChargedRequest): Promise<Refusal | undefined> | undefined {
      return keys && spend(keys, request, 1);
    },

    /**
     * Charges what a request runs beyond the point request() took: `cost` is its whole price. A
     * price over the key's burst is refused whatever is left, since no wait would let it through.
     */
    charge(request: ChargedRequest, cost: number): Promise<Refusal | undefined> | undefined {
      if (!keys || cost <= 1) return undefined;
      if (cost > perKey.burst) return overBurst(keys, request, cost);
      return spend(keys, request, cost - 1);
    },
  };
}

export type RateLimits = ReturnType<typeof createRateLimits>;
