import { announcingCreates } from '../pets/announcing-creates.ts';
import { createLocalPetChanges } from '../pets/pet-changes.ts';
import { createPetFeed } from '../pets/pet-feed.ts';
import { createRedisPetChanges } from '../pets/redis-pet-changes.ts';
import type { ServiceDependencies } from '../service.ts';
import { createFollowPets } from './follow-pets.ts';
import { createOpenStreams } from './open-streams.ts';

/**
 * What subscriptions need of the service: the repository every face creates through (it says
 * "pets changed" after each create), the feed subscribers read, and the open streams' limits. With
 * REDIS_URL, instances tell each other of creates through Redis; without it, only this instance's
 * subscribers hear of them at once (others find them on the slow timer).
 */
export function createSubscriptions({ config, stores, logger, metrics }: ServiceDependencies) {
  const changes = config.REDIS_URL ? createRedisPetChanges({ url: config.REDIS_URL, logger }) : createLocalPetChanges();
  const feed = createPetFeed({
    pets: stores.pets,
    changes,
    pollMs: config.SUBSCRIPTION_POLL_MS,
    settleMs: config.SUBSCRIPTION_SETTLE_MS,
    logger,
  });
  const limits = { maxPerKey: config.MAX_SUBSCRIPTIONS_PER_KEY, maxTotal: config.MAX_SUBSCRIPTIONS };
  const streams = createOpenStreams({ ...limits, metrics });
  return {
    /** The repository every face uses: REST, GraphQL, the fast path and idempotent creates. */
    pets: announcingCreates(stores.pets, changes),
    followPets: createFollowPets(feed, streams, limits),
    /** Every open stream ends (SSE `complete`) and new ones are refused: the instance is stopping. */
    endStreams: () => streams.endAll(),
    close: async () => {
      streams.endAll();
      await feed.close();
      await changes.close();
    },
  };
}
