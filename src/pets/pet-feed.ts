import type { Pet, PetStatus } from './pet.ts';

/** What one subscriber follows: pets after `afterId` (after the newest stored pet when absent), of one status or all. */
export interface PetFeedQuery {
  afterId?: number;
  status?: PetStatus;
}

/**
 * New pets as they are stored, for subscriptions. The database is the source of truth: a
 * notification (pet-changes.ts) only says "look again", and a slow timer looks again anyway.
 */
export interface PetFeed {
  /**
   * Each pet after the query's id, once, in id order, then each new one as it settles; pull-based,
   * so a consumer that does not ask holds no queue. Ends (returns) when `signal` aborts or close() runs.
   */
  follow(query: PetFeedQuery, signal: AbortSignal): AsyncGenerator<Pet, void, undefined>;
  /** Ends every follower and stops the timer and the notifications. */
  close(): Promise<void>;
}
