import type { Refusal } from './rate-limit-policy.ts';

/** Past this many blocked addresses, expired ones are swept before another is added. */
const BLOCKED_SWEEP_AT = 10_000;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Client addresses (limiterBucketOf's buckets) over their failed-authentication limit, whose missing
 * and wrong keys are refused with one Map read until their window ends. Each instance keeps its own,
 * filled when its own count is refused, so the look-up never waits for a shared store.
 */
export function createBlockedAddresses() {
  const blockedUntil = new Map<string, { until: number; refusal: Refusal }>();
  return {
    /** Blocks `bucket` for `forMs`, answered with `answer`; true when it was not blocked already: a block starts. */
    block(bucket: string, forMs: number, answer: Refusal): boolean {
      const now = Date.now();
      if (blockedUntil.size >= BLOCKED_SWEEP_AT) {
        for (const [other, { until }] of blockedUntil) if (until <= now) blockedUntil.delete(other);
      }
      const starts = (blockedUntil.get(bucket)?.until ?? 0) <= now;
      blockedUntil.set(bucket, { until: now + forMs, refusal: answer });
      return starts;
    },
    /** The refusal for a blocked bucket, its Retry-After counting down; undefined once its block ended. */
    refusalFor(bucket: string): Refusal | undefined {
      if (blockedUntil.size === 0) return undefined;
      const blocked = blockedUntil.get(bucket);
      if (!blocked) return undefined;
      const left = blocked.until - Date.now();
      if (left > 0) {
        const retryAfter = String(seconds(left));
        return { ...blocked.refusal, headers: { ...blocked.refusal.headers, 'Retry-After': retryAfter } };
      }
      blockedUntil.delete(bucket);
      return undefined;
    },
  };
}

export type BlockedAddresses = ReturnType<typeof createBlockedAddresses>;
