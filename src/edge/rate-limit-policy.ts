import BurstyRateLimiter from 'rate-limiter-flexible/lib/BurstyRateLimiter.js';
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import type { LimiterStore } from './limiter-store.ts';
import type { Balance, Counters } from './pay-points.ts';

/** Requests per second, sustained, and the most in one second; a rate of 0 turns the limit off. */
export interface Rate {
  rate: number;
  burst: number;
}

/** A request the limits refuse: 429 with these headers. */
export interface Refusal {
  message: string;
  headers: Record<string, string>;
}

/** The burst allowance (burst - rate points) refills once per this window. */
export const BURST_WINDOW_SECONDS = 10;

export interface Policy extends Counters {
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
export function createPolicy(name: string, { rate, burst }: Rate, store: LimiterStore): Policy | undefined {
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

/** A counter's refusal: the store answered, and the key is over its limit (anything else is the store failing). */
export const isRefusal = (rejected: unknown): rejected is RateLimiterRes => rejected instanceof RateLimiterRes;

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** The `RateLimit` field: what is left of the policy's quota, and when it is whole again. */
export const rateLimitField = (policy: Policy, remaining: number, msBeforeWhole: number) =>
  `"${policy.name}";r=${remaining};t=${seconds(msBeforeWhole)}`;

export function rateLimitFields(policy: Policy, result: RateLimiterRes): Record<string, string> {
  return {
    'RateLimit-Policy': policy.policyField,
    RateLimit: rateLimitField(policy, result.remainingPoints, result.msBeforeNext),
  };
}

/** 429's answer: Retry-After in whole seconds (at least one), and an empty quota until then. */
export function refusal(policy: Policy, msBeforeNext: number, message: string): Refusal {
  const retryAfter = Math.max(1, seconds(msBeforeNext));
  return {
    message: `${message}; retry after ${retryAfter} s`,
    headers: {
      'Retry-After': String(retryAfter),
      'RateLimit-Policy': policy.policyField,
      RateLimit: rateLimitField(policy, 0, retryAfter * 1000),
    },
  };
}

/**
 * A price the key cannot pay: RateLimit says what is left of the second's quota (left out when the
 * store cannot say), Retry-After when the whole price fits again (the next second, or the burst
 * allowance's refill). A price over the burst (`mostInOneSecond`) never fits: no wait lets it through.
 */
export function priceRefusal(policy: Policy, mostInOneSecond: number, cost: number, balance?: Balance): Refusal {
  const head = `This request costs ${cost} points (one per root field it runs), more than`;
  if (cost > mostInOneSecond || !balance) {
    const answer = refusal(
      policy,
      balance?.steadyMs ?? 1000,
      `${head} an API key may spend in one second (${mostInOneSecond}): send it as several smaller requests`,
    );
    if (balance) answer.headers.RateLimit = rateLimitField(policy, balance.steadyLeft, balance.steadyMs);
    else delete answer.headers.RateLimit;
    return answer;
  }
  const { steadyLeft, burstLeft, steadyMs, burstMs } = balance;
  const retryMs = cost <= policy.rate + burstLeft ? steadyMs : Math.max(steadyMs, burstMs);
  const answer = refusal(policy, retryMs, `${head} this API key has left now`);
  answer.headers.RateLimit = rateLimitField(policy, steadyLeft, steadyMs);
  return answer;
}
