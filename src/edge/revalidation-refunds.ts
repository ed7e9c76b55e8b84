import type RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import type { LimiterStore } from './limiter-store.ts';

import { createPolicy, givePointBack, isRefusal, type Policy } from './rate-limit-policy.ts';

/**
 * What a 304 matched by an entity tag gives back (conditional-get.ts; one matched by `*` saved no
 * body and gives nothing). A 304 still runs its operation (its tag is the answer's), so free
 * revalidations without end would be a way around the limit: each key may have as many
 * points back per second as its quota holds; past that allowance a 304 costs its point like any
 * answer. A key polling within its quota never spends it on answers that did not change.
 * Resolves to the second's counter after the refund, or null when nothing was given back.
 */
export function createRevalidationRefunds(keys: Policy, store: LimiterStore) {
  const allowance = createPolicy('revalidations', { rate: keys.rate, burst: keys.rate }, store) as Policy;
  return (key: string): Promise<RateLimiterRes | null> =>
    allowance.consume(key).then(
      () => givePointBack(keys, key),
      (rejected: unknown) => {
        if (isRefusal(rejected)) return null;
        throw rejected;
      },
    );
}
