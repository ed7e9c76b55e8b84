import type { Redis, RedisOptions } from 'ioredis';

/** How often a user of Redis asks it again while it does not answer, and the longest wait between reconnects. */
export const REDIS_RETRY_MS = 1_000;
/** The longest any command waits for Redis: on a LAN it answers within a millisecond or two. */
export const REDIS_DEADLINE_MS = 50;
/** Other applications may share the Redis: every key and channel of ours starts with this. */
export const REDIS_KEY_PREFIX = 'petstore-gateway:';

/**
 * How this service connects to Redis. Nothing waits for it: disconnected, a command fails at once (a
 * queued count would land in a later window); stalled, at its deadline; reconnects never stop.
 */
const CLIENT_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  retryStrategy: (attempt) => Math.min(attempt * 100, REDIS_RETRY_MS),
  connectTimeout: 2 * REDIS_RETRY_MS,
  commandTimeout: REDIS_DEADLINE_MS,
};

/** A connection per user (a subscribed one can issue no other command); ioredis is loaded only with REDIS_URL. */
export async function createRedisClient(url: string, connectionName: string): Promise<Redis> {
  const { Redis } = await import('ioredis');
  return new Redis(url, { ...CLIENT_OPTIONS, connectionName });
}

/** QUIT where Redis answers within the deadline, then cut whatever is left. */
export async function closeRedisClient(client: Redis): Promise<void> {
  await client.quit().catch(() => {});
  client.disconnect();
}
