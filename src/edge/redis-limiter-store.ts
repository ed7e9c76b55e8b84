import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { createRedisClient, REDIS_KEY_PREFIX as KEY_PREFIX, REDIS_RETRY_MS } from '../redis/client.ts';
import { createFleetSize } from './fleet-size.ts';
import type { LimiterSpec, LimiterStore } from './limiter-store.ts';
import { LocalCounter, SharedLimiter } from './shared-limiter.ts';

/** The longest a request waits for Redis: on a LAN it answers within a millisecond or two. */
export const REDIS_DEADLINE_MS = 50;
interface RedisSharingOptions {
  logger: Logger;
  /** True once counts are shared through Redis, false while this instance counts alone. */
  onShared: (shared: boolean) => void;
  /** Asks Redis whether it answers again (calls share() when it does). */
  probe: () => void;
}

/**
 * Whether this instance's counts are shared through Redis right now. Each change is said once (an
 * info line when sharing starts or resumes, a warning when it stops); while alone, Redis is probed
 * every REDIS_RETRY_MS until it answers.
 */
function createRedisSharing({ logger, onShared, probe }: RedisSharingOptions) {
  let state: 'starting' | 'shared' | 'alone' | 'closed' = 'starting';
  let everShared = false;
  let retrying: NodeJS.Timeout | undefined;

  const sharing = {
    isShared: () => state === 'shared',
    isClosed: () => state === 'closed',
    isStarting: () => state === 'starting',

    share(): void {
      if (state === 'shared' || state === 'closed') return;
      state = 'shared';
      clearInterval(retrying);
      onShared(true);
      logger.info(
        everShared
          ? 'Redis answers again: rate limits are shared by the instances again'
          : 'rate limits count in Redis, shared by every instance using it',
      );
      everShared = true;
    },

    alone(reason: string): void {
      if (state === 'alone' || state === 'closed') return;
      state = 'alone';
      onShared(false);
      logger.warn({ reason }, 'Redis does not answer: each instance counts rate limits alone until it does');
      retrying = setInterval(probe, REDIS_RETRY_MS).unref();
    },

    close(): void {
      state = 'closed';
      clearInterval(retrying);
    },
  };
  return sharing;
}

type RedisSharing = ReturnType<typeof createRedisSharing>;

interface RedisConnection {
  client: Redis;
  /** A spec's counter in Redis (SharedLimiter falls back to its local count on any error). */
  counter(spec: LimiterSpec): RateLimiterRedis;
}

/**
 * Loads the Redis client and RateLimiterRedis (only now, since REDIS_URL is set)
 * and connects in the background; undefined when the store closed meanwhile.
 */
async function connectRedis(url: string, sharing: RedisSharing): Promise<RedisConnection | undefined> {
  const [client, { default: RateLimiterRedisClass }] = await Promise.all([
    // Every command answers within the deadline or fails, and its check is counted in memory instead.
    createRedisClient(url, { commandTimeout: REDIS_DEADLINE_MS, connectionName: 'petstore-gateway' }),
    import('rate-limiter-flexible/lib/RateLimiterRedis.js'),
  ]);
  if (sharing.isClosed()) {
    client.disconnect();
    return undefined;
  }
  client.on('ready', sharing.share);
  client.on('error', (error: Error) => sharing.alone(error.message));
  client.on('close', () => sharing.alone('connection closed'));
  // A Redis that takes the connection but never answers (frozen) raises no error: say so all the same.
  const startingFor = 2 * REDIS_RETRY_MS;
  setTimeout(
    () => sharing.isStarting() && sharing.alone(`no answer within ${startingFor} ms of starting`),
    startingFor,
  ).unref();
  const counter = (spec: LimiterSpec) =>
    new RateLimiterRedisClass({
      ...spec,
      keyPrefix: `${KEY_PREFIX}${spec.keyPrefix}`,
      storeClient: client,
      rejectIfRedisNotReady: true,
    });
  return { client, counter };
}

export interface RedisLimiterStoreOptions {
  /** redis:// or rediss:// (TLS). */
  url: string;
  logger: Logger;
  /** True once counts are shared through Redis, false while this instance counts alone. */
  onShared: (shared: boolean) => void;
  /** One check counted in this instance's memory instead of Redis. */
  onFallback: () => void;
}

export interface RedisLimiterStore {
  store: LimiterStore;
  /** Stops asking and disconnects (after the drain: requests from then on count in memory). */
  close(): Promise<void>;
}

/**
 * Counters in Redis, shared by every instance using it, with this instance's memory as the fallback.
 * Nothing waits for Redis: the client connects in the background (the service starts counting in
 * memory), each command has a deadline (REDIS_DEADLINE_MS) and fails at once while disconnected.
 * The first failure switches every counter to memory (one warning); from then on requests never
 * touch Redis, and a probe asks it every REDIS_RETRY_MS (the reconnect does the same) until it
 * answers (one info line). In memory each instance allows its share of every limit (the limit over
 * the instances last counted in Redis, fleet-size.ts), so a stall does not multiply a key's limit.
 */
export function createRedisLimiterStore({
  url,
  logger,
  onShared,
  onFallback,
}: RedisLimiterStoreOptions): RedisLimiterStore {
  let connection: (RedisConnection & { probe: RateLimiterRedis }) | undefined;
  let loading: Promise<void> | undefined;
  const pending: [SharedLimiter, LimiterSpec][] = [];
  const sharing = createRedisSharing({ logger, onShared, probe });
  const fleet = createFleetSize(`${KEY_PREFIX}instances`, logger);

  // A frozen Redis, or one cut off by the network, keeps its connection and emits nothing: ask it,
  // with the command the limits use (a Redis that answers PING could still refuse scripts).
  function probe(): void {
    if (connection?.client.status !== 'ready') return; // reconnecting: its `ready` event ends this
    connection.probe.consume('probe').then(sharing.share, () => {});
  }

  function countedLocally(): void {
    onFallback();
    if (!sharing.isShared()) return;
    const status = connection?.client.status;
    sharing.alone(status === 'ready' ? `no answer within ${REDIS_DEADLINE_MS} ms` : `connection ${status}`);
  }

  async function load(): Promise<void> {
    const connected = await connectRedis(url, sharing);
    if (!connected) return;
    const probeLimiter = connected.counter({ keyPrefix: 'probe', points: Number.MAX_SAFE_INTEGER, duration: 1 });
    connection = { ...connected, probe: probeLimiter };
    for (const [limiter, spec] of pending.splice(0)) limiter.redis = connected.counter(spec);
    fleet.join(connected.client);
  }

  const store: LimiterStore = (spec) => {
    const local = new LocalCounter(spec, countedLocally);
    // Its share of the fleet's limit is what it allows while Redis is out.
    fleet.follow(local);
    const limiter = new SharedLimiter(spec, local, sharing.isShared);
    if (connection) limiter.redis = connection.counter(spec);
    else pending.push([limiter, spec]);
    loading ??= load().catch((error: unknown) => {
      logger.error({ err: error }, 'cannot load the Redis client: rate limits count in this instance only');
    });
    return limiter;
  };

  return {
    store,
    async close() {
      sharing.close();
      await loading;
      await fleet.leave();
      connection?.client.disconnect();
    },
  };
}
