import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import {
  closeRedisClient,
  createRedisClient,
  REDIS_KEY_PREFIX as KEY_PREFIX,
  REDIS_DEADLINE_MS,
  REDIS_RETRY_MS,
} from '../redis/client.ts';
import { type LimiterSpec, type LimiterStore, LocalCounter, SharedLimiter } from './limiter-store.ts';

/** An instance not heard from for this long has left the fleet (one that stops cleanly says so at once). */
const MEMBER_TTL_MS = 3 * REDIS_RETRY_MS;

// Scored by Redis's clock, not the instances' (theirs may differ): adds this instance, drops those
// gone quiet, and counts who is left.
const HEARTBEAT = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[1], ms, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('ZCARD', KEYS[1])`;

/**
 * How many instances count their rate limits in this Redis, learned through Redis itself: each says
 * it is there every REDIS_RETRY_MS; the count is kept as last learned while Redis does not answer, so
 * each local count allows its share of a limit until it does. Learned rather than configured: a fleet
 * that scales needs no setting kept in step with it.
 */
function createFleetSize(logger: Logger) {
  const key = `${KEY_PREFIX}instances`;
  const id = randomUUID();
  const counts: LocalCounter[] = [];
  let client: Redis | undefined;
  let instances = 1;
  let beating: NodeJS.Timeout | undefined;

  function learned(answer: unknown): void {
    const now = Math.max(1, Number(answer) || 1);
    if (now === instances) return;
    instances = now;
    for (const count of counts) count.shareAmong(now);
    logger.info(
      { instances: now },
      'instances sharing the rate limits through Redis: each counts its share while Redis is out',
    );
  }

  function beat(): void {
    if (client?.status !== 'ready') return;
    // A failed beat changes nothing: the count stays as last learned.
    client.eval(HEARTBEAT, 1, key, id, MEMBER_TTL_MS).then(learned, () => {});
  }

  return {
    /** From now on `count` allows its share of the fleet's limit (1 instance until one is learned). */
    follow(count: LocalCounter): void {
      counts.push(count);
      count.shareAmong(instances);
    },
    /** Starts saying this instance is there, at once and again on each reconnect. */
    join(redis: Redis): void {
      client = redis;
      redis.on('ready', beat);
      beat();
      beating = setInterval(beat, REDIS_RETRY_MS).unref();
    },
    /** Stops saying so, and leaves the count at once (within the command deadline; a failure waits out the TTL). */
    async leave(): Promise<void> {
      clearInterval(beating);
      if (client?.status === 'ready') await client.zrem(key, id).catch(() => {});
    },
  };
}

/**
 * Whether this instance's counts are shared through Redis right now. Each change is said once (an
 * info line when sharing starts or resumes, a warning when it stops); while alone, Redis is probed
 * every REDIS_RETRY_MS until it answers.
 */
function createRedisSharing(logger: Logger, onShared: (shared: boolean) => void, probe: () => void) {
  let state: 'starting' | 'shared' | 'alone' | 'closed' = 'starting';
  let everShared = false;
  let retrying: NodeJS.Timeout | undefined;

  function share(): void {
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
  }

  function alone(reason: string): void {
    if (state === 'alone' || state === 'closed') return;
    state = 'alone';
    onShared(false);
    logger.warn({ reason }, 'Redis does not answer: each instance counts rate limits alone until it does');
    retrying = setInterval(probe, REDIS_RETRY_MS).unref();
  }

  return {
    share,
    alone,
    isShared: () => state === 'shared',
    isClosed: () => state === 'closed',

    /** Shared when the client is ready (now, or on each reconnect); alone when it fails or never answers. */
    follow(client: Redis): void {
      client.on('ready', share);
      client.on('error', (error: Error) => alone(error.message));
      client.on('close', () => alone('connection closed'));
      // A Redis that takes the connection but never answers (frozen) raises no error: say so all the same.
      const startingFor = 2 * REDIS_RETRY_MS;
      const silent = () => state === 'starting' && alone(`no answer within ${startingFor} ms of starting`);
      setTimeout(silent, startingFor).unref();
      // It may have connected while RateLimiterRedis loaded: its `ready` event is then past.
      if (client.status === 'ready') share();
    },

    close(): void {
      state = 'closed';
      clearInterval(retrying);
    },
  };
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

/**
 * Counters in Redis, shared by every instance using it, with this instance's memory as the fallback.
 * Nothing waits for Redis: the client connects in the background (the service starts counting in
 * memory), each command has a deadline (REDIS_DEADLINE_MS) and fails at once while disconnected.
 * The first failure switches every counter to memory (one warning); from then on requests never
 * touch Redis, and a probe asks it every REDIS_RETRY_MS (the reconnect does the same) until it
 * answers (one info line). In memory each instance allows its share of every limit (the limit over
 * the instances last counted in Redis), so a stall does not multiply a key's limit.
 */
export function createRedisLimiterStore({ url, logger, onShared, onFallback }: RedisLimiterStoreOptions) {
  let connection:
    | { client: Redis; counter: (spec: LimiterSpec) => RateLimiterRedis; probe: RateLimiterRedis }
    | undefined;
  let loading: Promise<void> | undefined;
  const pending: [SharedLimiter, LimiterSpec][] = [];
  const sharing = createRedisSharing(logger, onShared, probe);
  const fleet = createFleetSize(logger);

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

  // Loads the client and RateLimiterRedis only now (REDIS_URL is set), and connects in the background.
  async function load(): Promise<void> {
    const [client, { default: RateLimiterRedisClass }] = await Promise.all([
      createRedisClient(url, 'petstore-gateway'),
      import('rate-limiter-flexible/lib/RateLimiterRedis.js'),
    ]);
    if (sharing.isClosed()) return client.disconnect();
    // A failing command (the deadline included) is counted in memory instead (SharedLimiter).
    const counter = (spec: LimiterSpec) =>
      new RateLimiterRedisClass({
        ...spec,
        keyPrefix: `${KEY_PREFIX}${spec.keyPrefix}`,
        storeClient: client,
        rejectIfRedisNotReady: true,
      });
    connection = {
      client,
      counter,
      probe: counter({ keyPrefix: 'probe', points: Number.MAX_SAFE_INTEGER, duration: 1 }),
    };
    for (const [limiter, spec] of pending.splice(0)) limiter.redis = counter(spec);
    fleet.join(client);
    sharing.follow(client);
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
    /** Stops asking and disconnects (after the drain: requests from then on count in memory). */
    async close(): Promise<void> {
      sharing.close();
      await loading;
      await fleet.leave();
      if (connection) await closeRedisClient(connection.client);
    },
  };
}
