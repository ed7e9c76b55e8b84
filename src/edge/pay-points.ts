import type { RateLimiterLike } from 'rate-limiter-flexible';
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';

/** A key's two counters: the second's quota of `rate` points and the burst allowance of `extra` (none: 0). */
export interface Counters {
  steady: RateLimiterLike;
  burst: RateLimiterLike | undefined;
  rate: number;
  extra: number;
}

/** What a key has left, as read (or as given back) when a payment fell short. */
export interface Balance {
  steadyLeft: number;
  burstLeft: number;
  /** Until the second's quota is whole again, and the burst allowance (0: it is whole now). */
  steadyMs: number;
  burstMs: number;
}

/** Paid: the second's counter after it (the RateLimit field). Short: nothing is spent. */
export type Payment = { paid: RateLimiterRes; short?: undefined } | { paid?: undefined; short: Balance };

/**
 * Pays `points` from a key's second quota and, for what that lacks, its burst allowance: one consume
 * each, since BurstyRateLimiter takes a whole consume from one or the other, never both. What is left
 * is read first, so a price that does not fit spends nothing; when a concurrent request took points
 * in between and either consume is refused, what both took is given back. At most six store calls,
 * whatever the price. Rejects when the store fails.
 */
export async function payPoints(
  { steady, burst, rate, extra }: Counters,
  key: string,
  points: number,
): Promise<Payment> {
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
export async function givePointBack({ steady, burst, rate }: Counters, key: string): Promise<RateLimiterRes | null> {
  const [steadyNow, burstNow] = await Promise.all([steady.get(key), burst?.get(key)]);
  if (!steadyNow || steadyNow.consumedPoints <= 0) return steadyNow;
  const fromBurst = steadyNow.consumedPoints > rate && burst && burstNow && burstNow.consumedPoints > 0;
  const [after] = await Promise.all([steady.reward(key, 1), fromBurst ? burst.reward(key, 1) : undefined]);
  return after;
}
