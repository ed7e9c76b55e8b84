import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import BurstyRateLimiter from 'rate-limiter-flexible/lib/BurstyRateLimiter.js';
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import { setEarlyHeader } from '../http/edge-response.ts';
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
  return { consume: (key) => limiter.consume(key), policyField: `"${name}";q=${rate};w=1`, name };
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

/** Addresses over their failed-authentication limit, refused with one Map read until their window ends. */
function createBlockList() {
  const blockedUntil = new Map<string, { until: number; refusal: Refusal }>();
  return {
    block(address: string, result: RateLimiterRes, answer: Refusal): void {
      const now = Date.now();
      if (blockedUntil.size >= BLOCKED_SWEEP_AT) {
        for (const [other, { until }] of blockedUntil) if (until <= now) blockedUntil.delete(other);
      }
      blockedUntil.set(address, { until: now + result.msBeforeNext, refusal: answer });
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

/**
 * The edge's rate limits. Per API key on every authenticated request; per client address on failed
 * authentication, and an address over that limit is refused before its key is even checked (a
 * synchronous look-up in this process, so the hot path pays one Map read for it). With a shared
 * store the counts are the fleet's; that block list stays each instance's, filled when its own
 * count is refused.
 */
export function createRateLimits({ perKey, authFailures, logger, store = memoryLimiterStore }: RateLimitsOptions) {
  const keys = createPolicy('default', perKey, store);
  const failures = createPolicy('auth-failures', authFailures, store);
  const blocked = createBlockList();

  /** A store that fails must not take the API down: let the request through (Redis's falls back to memory first). */
  function storeFailed(error: unknown, reqId: string): undefined {
    logger.warn({ err: error, reqId }, 'rate limit store failed; request let through');
    return undefined;
  }

  return {
    /** The refusal for an address over its failed-authentication limit, before its key is looked at. */
    blockedAddress: blocked.refusalFor,

    /** Counts a failed authentication: the 401's RateLimit fields, or a refusal once over the limit. */
    failedAuthentication(
      address: string,
      reqId: string,
    ): Promise<{ headers: Record<string, string>; refusal?: Refusal }> | undefined {
      if (!failures) return undefined;
      return failures.consume(address).then(
        (result) => ({ headers: rateLimitFields(failures, result) }),
        (rejected: unknown) => {
          if (!(rejected instanceof RateLimiterRes)) return storeFailed(rejected, reqId) ?? { headers: {} };
          const answer = refusal(failures, rejected, 'Too many failed authentications from this address');
          blocked.block(address, rejected, answer);
          return { headers: answer.headers, refusal: answer };
        },
      );
    },

    /** Counts a request of this key: sets its RateLimit fields on `res`, or gives the refusal. */
    request(keyId: string, res: ServerResponse, reqId: string): Promise<Refusal | undefined> | undefined {
      if (!keys) return undefined;
      return keys.consume(keyId).then(
        (result) => {
          setEarlyHeader(res, 'RateLimit-Policy', keys.policyField);
          setEarlyHeader(res, 'RateLimit', `"default";r=${result.remainingPoints};t=${seconds(result.msBeforeNext)}`);
          return undefined;
        },
        (rejected: unknown) => {
          if (!(rejected instanceof RateLimiterRes)) return storeFailed(rejected, reqId);
          return refusal(keys, rejected, `Too many requests for this API key (over ${perKey.rate} per second)`);
        },
      );
    },
  };
}

export type RateLimits = ReturnType<typeof createRateLimits>;
