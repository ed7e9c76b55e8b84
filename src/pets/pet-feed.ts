import type { Logger } from 'pino';
import type { Pet, PetStatus } from './pet.ts';
import type { PetChanges } from './pet-changes.ts';
import type { PetRepository, StoredEntry } from './pet-repository.ts';
import { FEED_BATCH } from './pet-settled.ts';
import { createPetTail, type PetTail } from './pet-tail.ts';

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

export interface PetFeedOptions {
  /** The repository (reads only: highestId, readAfter). */
  pets: PetRepository;
  /** "Look again" notifications. */
  changes: PetChanges;
  /** The slow timer: look again this often while anyone follows, so a lost notification costs only time. */
  pollMs: number;
  /** How long pets beyond a missing id are held back before the gap is accepted. */
  settleMs: number;
  logger: Logger;
  /** How many recent pets the instance keeps for its followers; one further behind reads the database. */
  recentSize?: number;
}

export const DEFAULT_RECENT_SIZE = 1_000;

const matches = (status: PetStatus | undefined) => (pet: Pet) => status === undefined || pet.status === status;

/**
 * One follower: its cursor is all it keeps. Behind the tail's ring it reads the database after its
 * cursor (up to what the tail has settled); within it, it takes the ring's pets one by one; at the
 * tail it waits for the next look. A failed read is logged once per streak and tried again at the
 * next look: the stream stays open.
 */
async function* followFrom(tail: PetTail, options: PetFeedOptions, query: PetFeedQuery, signal: AbortSignal) {
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
    cursor ??= fromStart ? (tail.startId() ?? tailId) : tailId;
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
    let entries: StoredEntry[];
    try {
      entries = await options.pets.readAfter(cursor, FEED_BATCH);
      failing = false;
    } catch (error) {
      if (!failing)
        options.logger.warn({ err: error }, 'a pet feed follower cannot read: it tries again at the next look');
      failing = true;
      await tail.next(signal);
      continue;
    }
    const settled = entries.filter((entry) => entry.id <= tailId);
    for (const { id, pet } of settled) {
      if (ended()) return;
      cursor = id;
      if (pet && wanted(pet)) yield pet;
    }
    // Everything up to what the tail had settled is read: from here the ring (or more reading) goes on.
    if (settled.length < FEED_BATCH) cursor = Math.max(cursor, tailId);
  }
}

/**
 * The feed of one instance: one shared tail reads new pets while anyone follows, and each follower
 * keeps only its cursor, so memory does not grow with a slow consumer.
 */
export function createPetFeed(options: PetFeedOptions): PetFeed {
  const tail = createPetTail({ ...options, recentSize: options.recentSize ?? DEFAULT_RECENT_SIZE });
  return {
    async *follow(query, signal) {
      if (tail.isClosed() || signal.aborted) return;
      const leave = tail.join();
      // A consumer that aborts and drops the generator without return() must not count as following.
      signal.addEventListener('abort', leave, { once: true });
      try {
        yield* followFrom(tail, options, query, signal);
      } finally {
        signal.removeEventListener('abort', leave);
        leave();
      }
    },
    async close() {
      tail.close();
    },
  };
}
