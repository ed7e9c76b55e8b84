import type { Logger } from 'pino';
import { createBlockedAddresses } from './blocked-addresses.ts';
import { isRefusal, type Policy, type Refusal, rateLimitFields, refusal } from './rate-limit-policy.ts';

/** A 401's RateLimit fields, or the refusal once its address is over the limit. */
export interface FailureCounted {
  headers: Record<string, string>;
  refusal?: Refusal;
}

interface FailedAuthenticationsOptions {
  /** The per-address policy; none: the limit is off. */
  failures: Policy | undefined;
  logger: Logger;
  /** Logs a store failure; the request is let through. */
  storeFailed: (error: unknown, reqId: string) => undefined;
}

/**
 * The failed-authentication limit per client address. An address over it has its missing and wrong
 * keys refused at once (a synchronous look-up in this process), while a valid key from it is served:
 * one client behind a NAT or a balancer that guesses keys must not lock out its neighbours. With a
 * shared store the counts are the fleet's; the block list stays each instance's, filled when its
 * own count is refused.
 */
export function createFailedAuthentications({ failures, logger, storeFailed }: FailedAuthenticationsOptions) {
  const blocked = createBlockedAddresses();

  function refused(bucket: string, address: string, reqId: string, policy: Policy, msBeforeNext: number) {
    const answer = refusal(policy, msBeforeNext, 'Too many failed authentications from this address');
    if (blocked.block(bucket, msBeforeNext, answer)) {
      const blockedFor = Number(answer.headers['Retry-After']);
      logger.warn(
        { clientAddress: address, bucket, reqId, blockedForSeconds: blockedFor },
        `client address blocked for ${blockedFor} s after too many failed authentications: its missing and wrong keys get 429, valid keys are still served`,
      );
    }
    return { headers: answer.headers, refusal: answer };
  }

  return {
    /** The refusal for a blocked bucket (limiterBucketOf) whose request brought no valid key. */
    blockedAddress: blocked.refusalFor,

    /**
     * Counts a failed authentication of `bucket` (limiterBucketOf of `address`): the 401's RateLimit
     * fields, or a refusal once over the limit, when the bucket's block starts (logged once).
     */
    failedAuthentication(bucket: string, address: string, reqId: string): Promise<FailureCounted> | undefined {
      if (!failures) return undefined;
      return failures.consume(bucket).then(
        (result) => ({ headers: rateLimitFields(failures, result) }),
        (rejected: unknown) => {
          if (!isRefusal(rejected)) return storeFailed(rejected, reqId) ?? { headers: {} };
          return refused(bucket, address, reqId, failures, rejected.msBeforeNext);
        },
      );
    },
  };
}
