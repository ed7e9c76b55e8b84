import type { Logger } from 'pino';
import BurstyRateLimiter from 'rate-limiter-flexible/lib/BurstyRateLimiter.js';
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import { createBlockedAddresses } from './blocked-addresses.ts';
import { type LimiterStore, memoryLimiterStore } from './limiter-store.ts';
import { type Balance, type Counters, payPoints } from './pay-points.ts';

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

interface Policy extends Counters {
  /** One point: from the second's quota, or once that is spent, from the burst allowance. */
  consume(key: string): Promise<RateLimiterRes>;
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
  const extra = Math.max(0, burst - rate);
  const allowance =
    extra > 0 ? store({ keyPrefix: `rl-${name}-burst`, points: extra, duration: BURST_WINDOW_SECONDS }) : undefined;
  const limiter = allowance ? new BurstyRateLimiter(steady, allowance) : steady;
  return {
    consume: (key) => limiter.consume(key),
    steady,
    burst: allowance,
    rate,
    extra,
    policyField: `"${name}";q=${rate};w=1`,
    name,
  };
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** The `RateLimit` field: what is left of the policy's quota, and when it is whole again. */
const rateLimitField = (policy: Policy, remaining: number, msBeforeWhole: number) =>
  `"${policy.name}";r=${remaining};t=${seconds(msBeforeWhole)}`;

function rateLimitFields(policy: Policy, result: RateLimiterRes): Record<string, string> {
  return {
    'RateLimit-Policy': policy.policyField,
    RateLimit: rateLimitField(policy, result.remainingPoints, result.msBeforeNext),
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
  const blocked = createBlockedAddresses();

  /** A store that fails must not take the API down: let the request through (Redis's falls back to memory first). */
  function storeFailed(error: unknown, reqId: string): undefined {
    logger.warn({ err: error, reqId }, 'rate limit store failed; request let through');
    return undefined;
  }

  function setRateLimitFields(policy: Policy, request: ChargedRequest, result: RateLimiterRes): undefined {
    request.setResponseHeader('RateLimit-Policy', policy.policyField);
    request.setResponseHeader('RateLimit', rateLimitField(policy, result.remainingPoints, result.msBeforeNext));
    return undefined;
  }

  /** One point of a key: its RateLimit fields for the answer, or the refusal. */
  function spendOne(policy: Policy, request: ChargedRequest): Promise<Refusal | undefined> {
    return policy.consume(request.keyId).then(
      (result) => setRateLimitFields(policy, request, result),
      (rejected: unknown) => {
        if (!(rejected instanceof RateLimiterRes)) return storeFailed(rejected, request.id);
        return refusal(policy, rejected, `Too many requests for this API key (over ${perKey.rate} per second)`);
      },
    );
  }

  /**
   * A price the key cannot pay: RateLimit says what is left of the second's quota (left out when the
   * store cannot say), Retry-After when the whole price fits again (the next second, or the burst
   * allowance's refill). A price over the burst never fits: no wait lets it through.
   */
  function priceRefusal(policy: Policy, cost: number, balance: Balance | undefined): Refusal {
    const head = `This request costs ${cost} points (one per root field it runs), more than`;
    if (cost > perKey.burst || !balance) {
      const answer = refusal(
        policy,
        new RateLimiterRes(0, balance?.steadyMs ?? 1000),
        `${head} an API key may spend in one second (${perKey.burst}): send it as several smaller requests`,
      );
      if (balance) answer.headers.RateLimit = rateLimitField(policy, balance.steadyLeft, balance.steadyMs);
      else delete answer.headers.RateLimit;
      return answer;
    }
    const { steadyLeft, burstLeft, steadyMs, burstMs } = balance;
    const retryMs = cost <= policy.rate + burstLeft ? steadyMs : Math.max(steadyMs, burstMs);
    const answer = refusal(policy, new RateLimiterRes(0, retryMs), `${head} this API key has left now`);
    answer.headers.RateLimit = rateLimitField(policy, steadyLeft, steadyMs);
    return answer;
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
          if (blocked.block(bucket, rejected.msBeforeNext, answer)) {
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
      return keys && spendOne(keys, request);
    },

    /**
     * Charges what a request runs beyond the point request() took: `cost` is its whole price. A price
     * the key cannot pay now spends nothing; one over the key's burst is refused whatever is left,
     * since no wait would let it through.
     */
    charge(request: ChargedRequest, cost: number): Promise<Refusal | undefined> | undefined {
      if (!keys || cost <= 1) return undefined;
      const overBurst = cost > perKey.burst;
      // Over the burst: only read what is left, for the RateLimit field.
      return payPoints(keys, request.keyId, overBurst ? Number.POSITIVE_INFINITY : cost - 1).then(
        ({ paid, short }) => (paid ? setRateLimitFields(keys, request, paid) : priceRefusal(keys, cost, short)),
        (error: unknown) => {
          if (!overBurst) return storeFailed(error, request.id);
          logger.warn({ err: error, reqId: request.id }, 'rate limit store failed; RateLimit left out of a refusal');
          return priceRefusal(keys, cost, undefined);
        },
      );
    },
  };
}

export type RateLimits = ReturnType<typeof createRateLimits>;
