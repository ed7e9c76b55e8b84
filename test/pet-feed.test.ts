import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../src/db/mongo.ts';
import type { NewPet, Pet } from '../src/pets/pet.ts';
import { createLocalPetChanges } from '../src/pets/pet-changes.ts';
import { createPetFeed, type PetFeed, type PetFeedOptions } from '../src/pets/pet-feed.ts';
import type { PetRepository } from '../src/pets/pet-repository.ts';
import { createPetRepository } from '../src/stores.ts';
import { capturingLogger } from './support/capturing-logger.ts';
import { type FeedReader, freshPets, readerOf, until } from './support/feed-reader.ts';
import { startOwnDatabase } from './support/own-database.ts';

const POLL_MS = 100;
/** Long enough that a pet delivered well before it was not held at a gap. */
const SETTLE_MS = 1_500;
const EACH_MS = 3_000;

/** The real repository, with its feed reads counted as they complete (the tail's looks), nothing else changed. */
function counted(pets: PetRepository) {
  const counts = { highestId: 0, readAfter: 0 };
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
  };
  return { pets: wrapped, counts };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  database: Database;
  pets: PetRepository;
  counts: { highestId: number; readAfter: number };
  feed: PetFeed;
  changes: ReturnType<typeof createLocalPetChanges>;
  /** Creates pets one after another, announcing each as the service does. */
  add(...pets: NewPet[]): Promise<Pet[]>;
  follow(query?: Parameters<PetFeed['follow']>[0]): FeedReader & { abort(): void };
}

async function setUp(options: Partial<PetFeedOptions> = {}): Promise<Setup> {
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

const pet = (name: string, status?: Pet['status']): NewPet => ({ name, categoryId: 1, ...(status ? { status } : {}) });
const ids = (pets: readonly Pet[]) => pets.map((one) => one.id);

/** Starts a follower with no cursor and waits until the tail has looked since it joined. */
async function followFromNow(setup: Setup, query: { status?: Pet['status'] } = {}) {
  const before = setup.counts.readAfter;
  const reader = setup.follow(query);
  expect(await reader.next(1)).toBe('quiet'); // the first pull joins the feed
  await until(() => setup.counts.readAfter > before, EACH_MS, 'the tail looks');
  return reader;
}

describe('when a client follows new pets', () => {
  it('then it gets each pet created after it started, once, in id order, and none from before', async () => {
    const setup = await setUp();
    await setup.add(pet('before'));
    const reader = await followFromNow(setup);
    const created = await setup.add(pet('one'), pet('two'), pet('three'));
    expect(ids(await reader.take(3, EACH_MS))).toEqual(ids(created));
    expect(await reader.next(3 * POLL_MS)).toBe('quiet');
  });

  it('then with a cursor it gets every stored pet after it first, then the live ones', async () => {
    const setup = await setUp();
    const stored = await setup.add(pet('a'), pet('b'), pet('c'), pet('d'));
    const reader = setup.follow({ afterId: stored[1]?.id });
    expect(ids(await reader.take(2, EACH_MS))).toEqual(ids(stored.slice(2)));
    const live = await setup.add(pet('e'), pet('f'));
    expect(ids(await reader.take(2, EACH_MS))).toEqual(ids(live));
  });

  it('then a status filter passes only pets of that status, stored and live', async () => {
    const setup = await setUp();
    const stored = await setup.add(pet('a', 'sold'), pet('b', 'available'), pet('c'), pet('d', 'sold'));
    const reader = setup.follow({ afterId: 0, status: 'sold' });
    expect(ids(await reader.take(2, EACH_MS))).toEqual([stored[0]?.id, stored[3]?.id]);
    const live = await setup.add(pet('e', 'pending'), pet('f', 'sold'), pet('g'), pet('h', 'sold'));
    expect(ids(await reader.take(2, EACH_MS))).toEqual([live[1]?.id, live[3]?.id]);
    expect(await reader.next(3 * POLL_MS)).toBe('quiet');
  });

  it('then two followers at different cursors each get their own pets', async () => {
    const setup = await setUp();
    const stored = await setup.add(pet('a'), pet('b'));
    const fromStart = setup.follow({ afterId: 0 });
    const fromNow = await followFromNow(setup);
    const live = await setup.add(pet('c'));
    expect(ids(await fromStart.take(3, EACH_MS))).toEqual(ids([...stored, ...live]));
    expect(ids(await fromNow.take(1, EACH_MS))).toEqual(ids(live));
  });
});

describe('when ids are stored out of order', () => {
  it('then pets beyond a missing id wait for it and come in id order once it is stored', async () => {
    const setup = await setUp();
    const reader = await followFromNow(setup);
    const first = await setup.pets.allocateId();
    const second = await setup.pets.allocateId();
    await setup.pets.create(pet('second'), { id: second });
    setup.changes.announce();
    expect(await reader.next(3 * POLL_MS)).toBe('quiet');
    const started = Date.now();
    await setup.pets.create(pet('first'), { id: first });
    setup.changes.announce();
    expect(ids(await reader.take(2, EACH_MS))).toEqual([first, second]);
    expect(Date.now() - started).toBeLessThan(SETTLE_MS);
  });

  it('then a gap that never fills is given up after the settle window, and a pet stored later under it is not delivered', async () => {
    const setup = await setUp();
    const reader = await followFromNow(setup);
    const missing = await setup.pets.allocateId();
    const stored = await setup.add(pet('beyond the gap'));
    const started = Date.now();
    expect(ids(await reader.take(1, SETTLE_MS + EACH_MS))).toEqual(ids(stored));
    expect(Date.now() - started).toBeGreaterThanOrEqual(SETTLE_MS - 100);
    await setup.pets.create(pet('too late'), { id: missing });
    const next = await setup.add(pet('next'));
    expect(ids(await reader.take(1, EACH_MS))).toEqual(ids(next));
  });

  it('then unreadable documents are skipped without holding back what follows', async () => {
    const setup = await setUp();
    const reader = await followFromNow(setup);
    const raw = setup.database.db.collection<{ _id: number; name: unknown }>('pets');
    const unreadable = await setup.pets.allocateId();
    await raw.insertOne({ _id: unreadable, name: 42 });
    await raw.insertOne({ _id: unreadable + 0.5, name: 'not an integer id' });
    const started = Date.now();
    const after = await setup.add(pet('after the unreadable one'));
    expect(ids(await reader.take(1, EACH_MS))).toEqual(ids(after));
    expect(Date.now() - started).toBeLessThan(SETTLE_MS);
  });
});

describe('when a follower falls behind the instance’s recent pets', () => {
  it('then it catches up from the database, every pet in order', async () => {
    const setup = await setUp({ recentSize: 3 });
    const fast = await followFromNow(setup);
    const slow = await followFromNow(setup);
    const created = await setup.add(...Array.from({ length: 10 }, (_, index) => pet(`pet ${index}`)));
    expect(ids(await fast.take(10, EACH_MS))).toEqual(ids(created));
    expect(ids(await slow.take(10, EACH_MS))).toEqual(ids(created));
  });
});

describe('when followers leave or the feed closes', () => {
  it('then an abort ends the generator, and with nobody following the feed reads nothing', async () => {
    const setup = await setUp();
    const reader = await followFromNow(setup);
    await until(() => setup.counts.readAfter >= 2, EACH_MS, 'the timer looks again');
    reader.abort();
    expect(await reader.ends(EACH_MS)).toBe(true);
    await sleep(2 * POLL_MS); // a read under way at the abort may still finish
    const reads = setup.counts.readAfter;
    setup.changes.announce();
    await sleep(5 * POLL_MS);
    expect(setup.counts.readAfter).toBe(reads);
  });

  it('then a process that only follows (a gap held, the timer running) exits by itself: the feed holds no handle', async () => {
    // The in-memory store, so that only the feed's own timers could keep the process alive.
    const module = (path: string) => JSON.stringify(new URL(path, import.meta.url).href);
    const script = [
      `const { createMemoryPetRepository } = await import(${module('../bench/memory-repository.ts')});`,
      `const { createLocalPetChanges } = await import(${module('../src/pets/pet-changes.ts')});`,
      `const { createPetFeed } = await import(${module('../src/pets/pet-feed.ts')});`,
      `const { pino } = await import('pino');`,
      'const pets = createMemoryPetRepository();',
      'const changes = createLocalPetChanges();',
      `const feed = createPetFeed({ pets, changes, pollMs: 50, settleMs: 60000, logger: pino({ level: 'silent' }) });`,
      'const followed = feed.follow({}, new AbortController().signal);',
      'void followed.next();',
      'await new Promise((resolve) => setTimeout(resolve, 200));',
      `await pets.create({ name: 'beyond a gap', categoryId: 1 }, { id: 3 });`,
      'changes.announce();',
      'await new Promise((resolve) => setTimeout(resolve, 200));',
      `console.log('following');`,
    ].join('\n');
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 10_000,
    });
    await expect(run).resolves.toMatchObject({ stdout: 'following\n' });
  });

  it('then close ends every follower, and following a closed feed ends at once', async () => {
    const setup = await setUp();
    const one = await followFromNow(setup);
    const two = setup.follow({ afterId: 0 });
    await setup.feed.close();
    expect(await one.ends(EACH_MS)).toBe(true);
    expect(await two.ends(EACH_MS)).toBe(true);
    expect(await setup.follow().ends(EACH_MS)).toBe(true);
  });

  it('then a follower whose signal is already aborted ends without reading', async () => {
    const setup = await setUp();
    const controller = new AbortController();
    controller.abort();
    expect(await readerOf(setup.feed.follow({}, controller.signal)).ends(EACH_MS)).toBe(true);
    expect(setup.counts.highestId + setup.counts.readAfter).toBe(0);
  });
});

describe('when the database stops answering under a follower', () => {
  it('then the stream stays open, the failure is logged once, and pets come again once it answers', async () => {
    const own = await startOwnDatabase();
    cleanups.push(() => own.remove());
    const database = await connectDatabase(own.uri, 'feed_outage');
    cleanups.push(() => database.close());
    const pets = createPetRepository(database, { deadlineMs: 300 });
    const changes = createLocalPetChanges();
    const { logger, lines } = capturingLogger();
    const feed = createPetFeed({ pets, changes, pollMs: POLL_MS, settleMs: SETTLE_MS, logger });
    cleanups.push(() => feed.close());
    const reader = readerOf(feed.follow({ afterId: 0 }, new AbortController().signal));
    const before = await pets.create(pet('before'));
    expect(ids(await reader.take(1, EACH_MS))).toEqual([before.id]);
    own.freeze();
    expect(await reader.next(10 * POLL_MS)).toBe('quiet');
    own.thaw();
    const after = await pets.create(pet('after'));
    changes.announce();
    expect(ids(await reader.take(1, EACH_MS))).toEqual([after.id]);
    const warnings = lines.filter((line) => line.msg?.startsWith('the pet feed cannot read'));
    expect(warnings).toHaveLength(1);
  });
});
