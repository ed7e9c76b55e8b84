import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { KeyGone } from '../http/stream-outcomes.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { announcingCreates, createLocalPetChanges } from '../pets/pet-changes.ts';
import { createPetFeed } from '../pets/pet-feed.ts';
import type { PetRepository } from '../pets/pet-repository.ts';
import { createRedisPetChanges } from '../pets/redis-pet-changes.ts';
import { createFollowPets, type StreamPayment } from './follow-pets.ts';
import { createOpenStreams, type StreamMetrics } from './open-streams.ts';

export interface SubscriptionsOptions {
  config: Pick<
    Config,
    'REDIS_URL' | 'SUBSCRIPTION_POLL_MS' | 'SUBSCRIPTION_SETTLE_MS' | 'MAX_SUBSCRIPTIONS_PER_KEY' | 'MAX_SUBSCRIPTIONS'
  >;
  /** The store's repository: the feed reads it, and creates through it are announced. */
  pets: PetRepository;
  logger: Logger;
  /** Stream metrics, and the failed authentications a key gone as its stream opens is counted with. */
  metrics: StreamMetrics & Pick<Metrics, 'countAuthFailure'>;
  /** Whether a key still authenticates (the key ring): a stream opening asks again. */
  keyStanding: (keyId: string) => KeyGone | undefined;
  /** What a stream's pets cost its key as it delivers them (rate-limits.ts streamPoints). */
  payStream: StreamPayment;
}

/**
 * What subscriptions need of the service: the repository every face creates through (it says
 * "pets changed" after each create), the feed subscribers read, and the open streams' limits. With
 * REDIS_URL, instances tell each other of creates through Redis; without it, only this instance's
 * subscribers hear of them at once (others find them on the slow timer).
 */
export function createSubscriptions({ config, pets, logger, metrics, keyStanding, payStream }: SubscriptionsOptions) {
  const changes = config.REDIS_URL ? createRedisPetChanges({ url: config.REDIS_URL, logger }) : createLocalPetChanges();
  const feed = createPetFeed({
    pets,
    changes,
    pollMs: config.SUBSCRIPTION_POLL_MS,
    settleMs: config.SUBSCRIPTION_SETTLE_MS,
    logger,
  });
  const limits = { maxPerKey: config.MAX_SUBSCRIPTIONS_PER_KEY, maxTotal: config.MAX_SUBSCRIPTIONS };
  const streams = createOpenStreams({ ...limits, metrics });
  return {
    /** The repository every face uses: REST, GraphQL, the fast path and idempotent creates. */
    pets: announcingCreates(pets, changes),
    followPets: createFollowPets(
      feed,
      streams,
      limits,
      (keyId) => {
        const gone = keyStanding(keyId);
        // Refused 401 as any bad key is, so counted with them.
        if (gone) metrics.countAuthFailure('invalid');
        return gone;
      },
      payStream,
    ),
    /**
     * Every open stream ends (SSE `complete`), one not ended a moment later has its connection cut,
     * and new ones are refused: the instance is stopping.
     */
    endStreams: () => streams.endAll(),
    /** The key was revoked or expired: its streams end. */
    endKey: (keyId: string, why: KeyGone) => streams.endKey(keyId, why),
    close: async () => {
      streams.endAll();
      await feed.close();
      await changes.close();
    },
  };
}
