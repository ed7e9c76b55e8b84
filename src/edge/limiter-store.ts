import type { RateLimiterLike } from 'rate-limiter-flexible';
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';

/** One counter: `points` per `duration` seconds for each key, under its own prefix. */
export interface LimiterSpec {
  keyPrefix: string;
  points: number;
  duration: number;
}

/**
 * Where the counters live. Memory serves one instance; `redis-limiter-store.ts` shares them among
 * every instance on one Redis (REDIS_URL), falling back to memory (each instance its share of the
 * limit) while Redis does not answer.
 */
export type LimiterStore = (spec: LimiterSpec) => RateLimiterLike;

export const memoryLimiterStore: LimiterStore = (spec) => new RateLimiterMemory(spec);
