import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';

/** One counter: `points` per `duration` seconds for each key, under its own prefix. */
export interface LimiterSpec {
  keyPrefix: string;
  points: number;
  duration: number;
}

/**
 * Where the counters live; the one place to change to share them. Memory serves one instance; for
 * many, return `new RateLimiterMongo({ storeClient, dbName, ...spec })` over the service's database.
 */
export type LimiterStore = (spec: LimiterSpec) => RateLimiterAbstract;

export const memoryLimiterStore: LimiterStore = (spec) => new RateLimiterMemory(spec);
