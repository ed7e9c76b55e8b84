import type { RateLimiterLike, RateLimiterRedis } from 'rate-limiter-flexible';
import RateLimiterCompatibleAbstract from 'rate-limiter-flexible/lib/RateLimiterCompatibleAbstract.js';
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';

/** One counter: `points` per `duration` seconds for each key, under its own prefix. */
export interface LimiterSpec {
  keyPrefix: string;
  points: number;
  duration: number;
}

/**
 * Where the counters live. Memory serves one instance; `redis-limiter-store.ts` shares them among
 * every instance on one Redis (REDIS_URL), falling back to memory (each instance its share of the
 * limit, LocalCounter) while Redis does not answer (SharedLimiter).
 */
export type LimiterStore = (spec: LimiterSpec) => RateLimiterLike;

export const memoryLimiterStore: LimiterStore = (spec) => new RateLimiterMemory(spec);

type Options = Record<string, unknown>;

/**
 * This instance's own count for one spec, kept while Redis answers too (what Redis counted for this
 * instance is added here), and the one that decides while Redis is out: then it allows this instance's
 * share of the fleet's limit, so a stall does not multiply a key's limit by the number of instances.
 */
export class LocalCounter extends RateLimiterMemory {
  readonly #counted: () => void;
  readonly #whole: number;

  constructor(spec: LimiterSpec, counted: () => void) {
    super(spec);
    this.#counted = counted;
    this.#whole = spec.points;
  }

  /** The share of each of `instances`: rounded up, so each instance may still pass at least one. */
  shareAmong(instances: number): void {
    this.points = Math.max(1, Math.ceil(this.#whole / Math.max(1, instances)));
  }

  /** What Redis counted for this instance: added to its own count, never refused. */
  mirror(key: string | number, points: number): void {
    void super.penalty(key, points);
  }

  // Every charge that decides goes through consume (reads, refunds and mirrors spend nothing), so
  // each check counted in memory passes through this one method.
  override consume(key: string | number, points?: number, options?: Options): Promise<RateLimiterRes> {
    this.#counted();
    return super.consume(key, points, options);
  }
}

/** An answer of the counter (a result, or a refusal): anything else is Redis failing. */
const isAnswer = (rejected: unknown) => rejected instanceof RateLimiterRes;

/**
 * One spec's counter as the edge sees it: in Redis while Redis is shared, in memory otherwise, so that
 * while Redis is out no request waits for it. A Redis call that fails (the deadline included) is
 * answered by the local count instead. What Redis counts is also added to the local count, so
 * that when Redis stops answering mid-window, this instance's share already holds what it served.
 */
export class SharedLimiter extends RateLimiterCompatibleAbstract {
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

  /** `call` on Redis while shared (on the local count should Redis fail), else on the local count. */
  #run<T>(call: (counter: RateLimiterLike) => Promise<T>, mirrored?: () => void): Promise<T> {
    const redis = this.redis && this.#shared() ? this.redis : undefined;
    if (!redis) return call(this.local);
    return call(redis).then(
      (result) => {
        mirrored?.();
        return result;
      },
      (rejected: unknown) => {
        if (!isAnswer(rejected)) return call(this.local);
        // Redis counts a refused charge too (it adds before it compares).
        mirrored?.();
        throw rejected;
      },
    );
  }

  override consume(key: string | number, points = 1, options?: Options) {
    return this.#run(
      (counter) => counter.consume(key, points, options),
      () => this.local.mirror(key, points),
    );
  }
  override penalty(key: string | number, points = 1, options?: Options) {
    return this.#run(
      (counter) => counter.penalty(key, points, options),
      () => this.local.mirror(key, points),
    );
  }
  override reward(key: string | number, points = 1, options?: Options) {
    return this.#run(
      (counter) => counter.reward(key, points, options),
      () => this.local.mirror(key, -points),
    );
  }
  override get(key: string | number, options?: Options) {
    return this.#run((counter) => counter.get(key, options));
  }
  override set(key: string | number, points: number, secDuration: number, options?: Options) {
    return this.#run((counter) => counter.set(key, points, secDuration, options));
  }
  override block(key: string | number, secDuration: number, options?: Options) {
    return this.#run((counter) => counter.block(key, secDuration, options));
  }
  override delete(key: string | number, options?: Options) {
    return this.#run((counter) => counter.delete(key, options));
  }
}
