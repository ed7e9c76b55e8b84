import type { Logger } from 'pino';
import { type Config, rateLimitsOf } from '../config.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { memoryLimiterStore } from './limiter-store.ts';
import { createRateLimits } from './rate-limits.ts';
import { createRedisLimiterStore } from './redis-limiter-store.ts';

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
