import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { RateLimiterLike, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import RateLimiterCompatibleAbstract from 'rate-limiter-flexible/lib/RateLimiterCompatibleAbstract.js';
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';
import type { LimiterSpec, LimiterStore } from './limiter-store.ts';

/** The longest a request waits for Redis: on a LAN it answers within a millisecond or two. */
export const REDIS_DEADLINE_MS = 50;
/** While an instance counts alone: how often it asks Redis again, and the longest wait between reconnects. */
export const REDIS_RETRY_MS = 1_000;
/** Other applications may share the Redis. */
const KEY_PREFIX = 'petstore-gateway:';

const CLIENT_OPTIONS: RedisOptions = {
  // Every command answers within the deadline or fails, and its check is counted in memory instead.
  commandTimeout: REDIS_DEADLINE_MS,
  // While disconnected, fail at once instead of queueing: a queued count would land in a later window.
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  // Forever, at most a second apart: counting is shared again within about a second of Redis returning.
  retryStrategy: (attempt) => Math.min(attempt * 100, REDIS_RETRY_MS),
  connectTimeout: 2 * REDIS_RETRY_MS,
  connectionName: 'petstore-gateway',
};

type Options = Record<string, unknown>;

/** This instance's own count for one spec: RateLimiterRedis's insurance, and the count while Redis is out. */
class LocalCounter extends RateLimiterMemory {
  readonly #counted: () => void;

  constructor(spec: LimiterSpec, counted: () => void) {
    super(spec);
    this.#counted = counted;
  }

  // Every charge that spends goes through consume (reads and refunds spend nothing), so each
  // check counted in memory passes through this one method.
  override consume(key: string | number, points?: number, options?: Options): Promise<RateLimiterRes> {
    this.#counted();
    return super.consume(key, points, options);
  }
}

/**
 * One spec's counter as the edge sees it: in Redis while Redis is shared (RateLimiterRedis falls back
 * to the local count on any error, the deadline included), in memory otherwise, so that while Redis
 * is out no request waits for it.
 */
class SharedLimiter extends RateLimiterCompatibleAbstract {
  override readonly keyPrefix: string;
  // The specs neither block past their window nor spread requests out.
  override blockDuration = 0;
  override execEvenly = false;
  redis: RateLimiterRedis | undefined;
  readonly local: LocalCounter;
  readonly #shared: () => boolean;

  constructor(spec: LimiterSpec, local: LocalCounter, shared: () => boolean) {
    super();
    this.keyPrefix = spec.keyPrefix;
    this.local = local;
    this.#shared = shared;
  }

  #counter(): RateLimiterLike {
    return this.redis && this.#shared() ? this.redis : this.local;
  }

  override consume(key: string | number, points?: number, options?: Options) {
    return this.#counter().consume(key, points, options);
  }
  override penalty(key: string | number, points?: number, options?: Options) {
    return this.#counter().penalty(key, points, options);
  }
  override reward(key: string | number, points?: number, options?: Options) {
    return this.#counter().reward(key, points, options);
  }
  override get(key: string | number, options?: Options) {
    return this.#counter().get(key, options);
  }
  override set(key: string | number, points: number, secDuration: number, options?: Options) {
    return this.#counter().set(key, points, secDuration, options);
  }
  override block(key: string | number, secDuration: number, options?: Options) {
    return this.#counter().block(key, secDuration, options);
  }
  override delete(key: string | number, options?: Options) {
    return this.#counter().delete(key, options);
  }
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
 * memory), each command has a 50 ms deadline and fails at once while disconnected. The first failure
 * switches every counter to memory (one warning); from then on requests never touch Redis, and a
 * probe asks it once a second (the reconnect does the same) until it answers (one info line).
 * The client and RateLimiterRedis are loaded only when REDIS_URL is set: ioredis adds 20 MB of RSS.
 */
export function createRedisLimiterStore({
  url,
  logger,
  onShared,
  onFallback,
}: RedisLimiterStoreOptions): RedisLimiterStore {
  let state: 'starting' | 'shared' | 'alone' | 'closed' = 'starting';
  let everShared = false;
  let client: Redis | undefined;
  let probeLimiter: RateLimiterRedis | undefined;
  let retrying: NodeJS.Timeout | undefined;
  let loading: Promise<void> | undefined;
  let attach: ((limiter: SharedLimiter, spec: LimiterSpec) => void) | undefined;
  const pending: [SharedLimiter, LimiterSpec][] = [];
  const isShared = () => state === 'shared';

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

  // A frozen Redis, or one cut off by the network, keeps its connection and emits nothing: ask it,
  // with the command the limits use (a Redis that answers PING could still refuse scripts).
  function probe(): void {
    if (client?.status !== 'ready' || !probeLimiter) return; // reconnecting: its `ready` event ends this
    probeLimiter.consume('probe').then(share, () => {});
  }

  function countedLocally(): void {
    onFallback();
    if (state !== 'shared') return;
    alone(client?.status === 'ready' ? `no answer within ${REDIS_DEADLINE_MS} ms` : `connection ${client?.status}`);
  }

  async function load(): Promise<void> {
    const [{ Redis }, { default: RateLimiterRedisClass }] = await Promise.all([
      import('ioredis'),
      import('rate-limiter-flexible/lib/RateLimiterRedis.js'),
    ]);
    if (state === 'closed') return;
    const redis = new Redis(url, CLIENT_OPTIONS);
    client = redis;
    redis.on('ready', share);
    redis.on('error', (error: Error) => alone(error.message));
    redis.on('close', () => alone('connection closed'));
    // A Redis that takes the connection but never answers (frozen) raises no error: say so all the same.
    const startingFor = 2 * REDIS_RETRY_MS;
    setTimeout(
      () => state === 'starting' && alone(`no answer within ${startingFor} ms of starting`),
      startingFor,
    ).unref();
    const counter = (spec: LimiterSpec, insuranceLimiter?: RateLimiterMemory) =>
      new RateLimiterRedisClass({
        ...spec,
        keyPrefix: `${KEY_PREFIX}${spec.keyPrefix}`,
        storeClient: redis,
        rejectIfRedisNotReady: true,
        ...(insuranceLimiter ? { insuranceLimiter } : {}),
      });
    probeLimiter = counter({ keyPrefix: 'probe', points: Number.MAX_SAFE_INTEGER, duration: 1 });
    attach = (limiter, spec) => {
      limiter.redis = counter(spec, limiter.local);
    };
    for (const [limiter, spec] of pending.splice(0)) attach(limiter, spec);
  }

  const store: LimiterStore = (spec) => {
    const limiter = new SharedLimiter(spec, new LocalCounter(spec, countedLocally), isShared);
    if (attach) attach(limiter, spec);
    else pending.push([limiter, spec]);
    loading ??= load().catch((error: unknown) => {
      logger.error({ err: error }, 'cannot load the Redis client: rate limits count in this instance only');
    });
    return limiter;
  };

  return {
    store,
    async close() {
      state = 'closed';
      clearInterval(retrying);
      await loading;
      client?.disconnect();
    },
  };
}
