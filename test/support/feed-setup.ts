// A pet feed over the real repository on a database of the test's own, with its reads counted.
import { pino } from 'pino';
import { expect } from 'vitest';
import type { Database } from '../../src/db/mongo.ts';
import type { NewPet, Pet } from '../../src/pets/pet.ts';
import { createLocalPetChanges, type PetChanges } from '../../src/pets/pet-changes.ts';
import { createPetFeed, type PetFeed, type PetFeedOptions } from '../../src/pets/pet-feed.ts';
import type { PetRepository } from '../../src/pets/pet-repository.ts';
import { type FeedReader, freshPets, readerOf, until } from './feed-reader.ts';

export const POLL_MS = 100;
/** Long enough that a pet delivered well before it was not held at a gap. */
export const SETTLE_MS = 1_500;
export const EACH_MS = 3_000;

export interface ReadCounts {
  highestId: number;
  /** The tail's reads, counted as they complete (a look has happened). */
  readAfter: number;
  /** Followers' catch-up reads, counted as they start (a read was asked for). */
  listPage: number;
}

/** The real repository with its feed reads counted, nothing else changed. */
export function counted(pets: PetRepository): { pets: PetRepository; counts: ReadCounts } {
  const counts: ReadCounts = { highestId: 0, readAfter: 0, listPage: 0 };
  const wrapped: PetRepository = {
    ...pets,
    highestId: async () => {
      const id = await pets.highestId();
      counts.highestId++;
      return id;
    },
    readAfter: async (afterId, limit) => {
      const entries = await pets.readAfter(afterId, limit);
      counts.readAfter++;
      return entries;
    },
    listPage: (query) => {
      counts.listPage++;
      return pets.listPage(query);
    },
  };
  return { pets: wrapped, counts };
}

export interface FeedSetup {
  database: Database;
  pets: PetRepository;
  counts: ReadCounts;
  feed: PetFeed;
  changes: PetChanges;
  /** Creates pets one after another, announcing each as the service does. */
  add(...pets: NewPet[]): Promise<Pet[]>;
  follow(query?: Parameters<PetFeed['follow']>[0]): FeedReader & { abort(): void };
}

/** A feed over the run's FerretDB; `cleanups` gets what undoes it. */
export async function setUpFeed(
  cleanups: (() => Promise<void>)[],
  options: Partial<PetFeedOptions> = {},
): Promise<FeedSetup> {
  const fresh = await freshPets();
  const { pets, counts } = counted(fresh.pets);
  const changes = createLocalPetChanges();
  const logger = options.logger ?? pino({ level: 'silent' });
  const feed = createPetFeed({ pets, changes, pollMs: POLL_MS, settleMs: SETTLE_MS, logger, ...options });
  cleanups.push(async () => {
    await feed.close();
    await changes.close();
    await fresh.drop();
  });
  return {
    database: fresh.database,
    pets,
    counts,
    feed,
    changes,
    async add(...newPets) {
      const created: Pet[] = [];
      for (const newPet of newPets) {
        created.push(await fresh.pets.create(newPet));
        changes.announce();
      }
      return created;
    },
    follow(query = {}) {
      const controller = new AbortController();
      return { ...readerOf(feed.follow(query, controller.signal)), abort: () => controller.abort() };
    },
  };
}

export const pet = (name: string, status?: Pet['status']): NewPet => ({
  name,
  categoryId: 1,
  ...(status ? { status } : {}),
});
export const ids = (pets: readonly Pet[]) => pets.map((one) => one.id);

/** Starts a follower with no cursor and waits until the tail has looked since it joined. */
export async function followFromNow(setup: FeedSetup, query: { status?: Pet['status'] } = {}) {
  const before = setup.counts.readAfter;
  const reader = setup.follow(query);
  expect(await reader.next(1)).toBe('quiet'); // the first pull joins the feed
  await until(() => setup.counts.readAfter > before, EACH_MS, 'the tail looks');
  return reader;
}
