import type { Redis, RedisOptions } from 'ioredis';

/** How often a user of Redis asks it again while it does not answer, and the longest wait between reconnects. */
export const REDIS_RETRY_MS = 1_000;
/** The longest any command waits for Redis: on a LAN it answers within a millisecond or two. */
export const REDIS_DEADLINE_MS = 50;
/** Other applications may share the Redis: every key and channel of ours starts with this. */
export const REDIS_KEY_PREFIX = 'petstore-gateway:';

/**
 * The one way this service connects to Redis, for the rate limits and the pet-change nudges alike.
 * Nothing waits for Redis: while disconnected a command fails at once instead of queueing (a queued
 * count would land in a later window; a late nudge is covered by the feeds' poll), a stalled Redis
 * (frozen, or cut off by the network, which raises no error) fails every command at its deadline,
 * and the client reconnects forever, at most REDIS_RETRY_MS apart.
 */
const CLIENT_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  retryStrategy: (attempt) => Math.min(attempt * 100, REDIS_RETRY_MS),
  connectTimeout: 2 * REDIS_RETRY_MS,
  commandTimeout: REDIS_DEADLINE_MS,
};

/**
 * A factory rather than one shared connection: a subscribed connection can issue no other command, so
 * the nudges need one of their own. The client is loaded only now (it is large, and only deployments
 * with REDIS_URL use it); it connects in the background.
 */
export async function createRedisClient(url: string, connectionName: string): Promise<Redis> {
  const { Redis } = await import('ioredis');
  return new Redis(url, { ...CLIENT_OPTIONS, connectionName });
}

/** QUIT where Redis answers within the deadline, then cut whatever is left. */
export async function closeRedisClient(client: Redis): Promise<void> {
  await client.quit().catch(() => {});
  client.disconnect();
}
