import type { Pet, PetPage, PetStatus } from './pet.ts';
import { createPetTail, FEED_BATCH, type PetTail, type PetTailOptions, unlessAborted } from './pet-tail.ts';

/** What one subscriber follows: pets after `afterId` (after the newest stored pet when absent), of one status or all. */
export interface PetFeedQuery {
  afterId?: number;
  status?: PetStatus;
}

export type PetFeedOptions = Omit<PetTailOptions, 'recentSize'> & Partial<Pick<PetTailOptions, 'recentSize'>>;

export const DEFAULT_RECENT_SIZE = 1_000;

const matches = (status: PetStatus | undefined) => (pet: Pet) => status === undefined || pet.status === status;

interface Follower {
  tail: PetTail;
  options: PetFeedOptions;
  query: PetFeedQuery;
  signal: AbortSignal;
}

/**
 * One follower, keeping only its cursor: behind the tail's ring it reads the database, within it takes
 * the ring's pets, at the tail waits for the next look. A failed read is retried; the stream stays open.
 */
async function* followFrom(follower: Follower): AsyncGenerator<Pet, void, undefined> {
  const { tail, options, query, signal } = follower;
  const wanted = matches(query.status);
  let cursor = query.afterId;
  let failing = false;
  const ended = () => tail.isClosed() || signal.aborted;
  // Joined before the tail started: "from now" is where it started, not where its first read got to.
  const fromStart = tail.tailId() === undefined;
  while (!ended()) {
    const tailId = tail.tailId();
    if (tailId === undefined) {
      await tail.next(signal);
      continue;
    }
    // Without a cursor: after the newest pet the tail has seen, held ones included.
    cursor ??= (fromStart ? tail.startId() : tail.seenId()) ?? tailId;
    if (tail.covers(cursor)) {
      const pet = tail.nextAbove(cursor);
      if (pet === undefined) {
        cursor = Math.max(cursor, tailId);
        await tail.next(signal);
        continue;
      }
      cursor = pet.id;
      if (wanted(pet)) yield pet;
      continue;
    }
    let page: PetPage | undefined;
    try {
      // One catch-up read, the status filtered by the database (the list's keyset query), so each read
      // delivers a pet or reaches what the tail had settled: a pull costs one read, however few match.
      const read = options.pets.listPage({ afterId: cursor, limit: FEED_BATCH, status: query.status });
      page = await unlessAborted(read, signal);
      failing = false;
    } catch (error) {
      if (!failing)
        options.logger.warn({ err: error }, 'a pet feed follower cannot read: it tries again after the next look');
      failing = true;
      await tail.nextRetry(signal);
      continue;
    }
    // The follower left while the read was under way.
    if (page === undefined) return;
    const settled = page.pets.filter((pet) => pet.id <= tailId);
    for (const pet of settled) {
      if (ended()) return;
      cursor = pet.id;
      yield pet;
    }
    // Everything up to what the tail had settled is read: from here the ring (or more reading) goes on.
    if (!page.hasNextPage || settled.length < page.pets.length) cursor = Math.max(cursor, tailId);
  }
}

/**
 * New pets as they are stored, for subscriptions. The database is the source of truth: a notification
 * (pet-changes.ts) only says "look again", and a slow timer looks again anyway. One shared tail reads
 * new pets while anyone follows, and each follower keeps only its cursor, so memory does not grow
 * with a slow consumer.
 */
export function createPetFeed(options: PetFeedOptions) {
  const tail = createPetTail({ ...options, recentSize: options.recentSize ?? DEFAULT_RECENT_SIZE });
  return {
    /**
     * Each pet after the query's id, once, in id order, then each new one as it settles; pull-based,
     * so a consumer that does not ask holds no queue. Ends when `signal` aborts or close() runs.
     */
    async *follow(query: PetFeedQuery, signal: AbortSignal): AsyncGenerator<Pet, void, undefined> {
      if (tail.isClosed() || signal.aborted) return;
      const leave = tail.join();
      // A consumer that aborts and drops the generator without return() must not count as following.
      signal.addEventListener('abort', leave, { once: true });
      try {
        yield* followFrom({ tail, options, query, signal });
      } finally {
        signal.removeEventListener('abort', leave);
        leave();
      }
    },
    /** Ends every follower and stops the timer and the notifications. */
    async close(): Promise<void> {
      tail.close();
    },
  };
}

export type PetFeed = ReturnType<typeof createPetFeed>;
