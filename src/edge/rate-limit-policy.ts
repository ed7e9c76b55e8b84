import type { RateLimiterLike } from 'rate-limiter-flexible';
import BurstyRateLimiter from 'rate-limiter-flexible/lib/BurstyRateLimiter.js';
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import type { LimiterStore } from './limiter-store.ts';

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

/** What a key has left, as read (or as given back) when a payment fell short. */
interface Balance {
  steadyLeft: number;
  burstLeft: number;
  /** Until the second's quota is whole again, and the burst allowance (0: it is whole now). */
  steadyMs: number;
  burstMs: number;
}

/** Paid: the second's counter after it (the RateLimit field). Short: nothing is spent. */
type Payment = { paid: RateLimiterRes; short?: undefined } | { paid?: undefined; short: Balance };

/** The burst allowance (burst - rate points) refills once per this window. */
export const BURST_WINDOW_SECONDS = 10;

/** A key's two counters: the second's quota of `rate` points and the burst allowance of `extra` (none: 0). */
export interface Policy {
  steady: RateLimiterLike;
  burst: RateLimiterLike | undefined;
  rate: number;
  extra: number;
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
const rateLimitField = (policy: Policy, remaining: number, msBeforeWhole: number) =>
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

/**
 * Pays `points` from a key's second quota and, for what that lacks, its burst allowance: one consume
 * each, since BurstyRateLimiter takes a whole consume from one or the other, never both. What is left
 * is read first, so a price that does not fit spends nothing; when a concurrent request took points
 * in between and either consume is refused, what both took is given back. At most six store calls,
 * whatever the price. Rejects when the store fails.
 */
export async function payPoints({ steady, burst, rate, extra }: Policy, key: string, points: number): Promise<Payment> {
  const [steadyNow, burstNow] = await Promise.all([steady.get(key), burst?.get(key)]);
  // Null: nothing spent in the counter's window, so it is whole.
  const steadyLeft = steadyNow ? steadyNow.remainingPoints : rate;
  const burstLeft = burst ? (burstNow ? burstNow.remainingPoints : extra) : 0;
  const balance = {
    steadyLeft,
    burstLeft,
    steadyMs: steadyNow?.msBeforeNext ?? 0,
    burstMs: burstNow?.msBeforeNext ?? 0,
  };
  if (points > steadyLeft + burstLeft) return { short: balance };

  const fromSteady = Math.min(points, steadyLeft);
  const parts = [
    { counter: steady, points: fromSteady },
    ...(burst ? [{ counter: burst, points: points - fromSteady }] : []),
  ].filter((part) => part.points > 0);
  const taken = await Promise.allSettled(parts.map((part) => part.counter.consume(key, part.points)));
  // A refusal by a counter is an answer; anything else is the store failing.
  const failed = taken.find((result) => result.status === 'rejected' && !(result.reason instanceof RateLimiterRes));
  if (failed?.status === 'rejected') throw failed.reason;
  if (taken.every((result) => result.status === 'fulfilled')) {
    const steadyTaken = taken[0]?.status === 'fulfilled' && fromSteady > 0 ? taken[0].value : steadyNow;
    return { paid: steadyTaken as RateLimiterRes };
  }
  // A refused consume counts too (the store adds before it compares): give back every part.
  const given = await Promise.all(parts.map((part) => part.counter.reward(key, part.points)));
  for (const [index, part] of parts.entries()) {
    const after = given[index] as RateLimiterRes;
    if (part.counter === steady)
      Object.assign(balance, { steadyLeft: after.remainingPoints, steadyMs: after.msBeforeNext });
    else Object.assign(balance, { burstLeft: after.remainingPoints, burstMs: after.msBeforeNext });
  }
  return { short: balance };
}

/**
 * Gives back the one point a request took (request()'s consume), from the counter that paid it: the
 * second's quota, or the burst allowance when that quota was spent (BurstyRateLimiter counts past it
 * before it takes from the allowance). A counter whose window has passed holds nothing to give back:
 * a new window starts whole. Resolves to the second's counter after it (the RateLimit field), or null
 * when it has no window now. Rejects when the store fails.
 */
export async function givePointBack({ steady, burst, rate }: Policy, key: string): Promise<RateLimiterRes | null> {
  const [steadyNow, burstNow] = await Promise.all([steady.get(key), burst?.get(key)]);
  if (!steadyNow || steadyNow.consumedPoints <= 0) return steadyNow;
  const fromBurst = steadyNow.consumedPoints > rate && burst && burstNow && burstNow.consumedPoints > 0;
  const [after] = await Promise.all([steady.reward(key, 1), fromBurst ? burst.reward(key, 1) : undefined]);
  return after;
}
