import type { RateLimiterLike, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import RateLimiterCompatibleAbstract from 'rate-limiter-flexible/lib/RateLimiterCompatibleAbstract.js';
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';
import type { LimiterSpec } from './limiter-store.ts';

type Options = Record<string, unknown>;

/** This instance's own count for one spec: RateLimiterRedis's insurance, and the count while Redis is out. */
export class LocalCounter extends RateLimiterMemory {
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
