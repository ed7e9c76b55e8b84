import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { readerOf, until } from './support/feed-reader.ts';
import { EACH_MS, type FeedSetup, followFromNow, ids, POLL_MS, pet, setUpFeed } from './support/feed-setup.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const setUp = (options?: Parameters<typeof setUpFeed>[1]): Promise<FeedSetup> => setUpFeed(cleanups, options);

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

describe('when a follower falls behind the instance’s recent pets', () => {
  it('then it catches up from the database, every pet in order', async () => {
    const setup = await setUp({ recentSize: 3 });
    const fast = await followFromNow(setup);
    const slow = await followFromNow(setup);
    const created = await setup.add(...Array.from({ length: 10 }, (_, index) => pet(`pet ${index}`)));
    expect(ids(await fast.take(10, EACH_MS))).toEqual(ids(created));
    expect(ids(await slow.take(10, EACH_MS))).toEqual(ids(created));
  });

  it('then a filter no stored pet matches costs one read, not one per batch of the whole collection', async () => {
    // The timer slowed down, so every read counted here is the tail's start or the follower's.
    const setup = await setUp({ pollMs: 60_000 });
    const stored = 2_000;
    const raw = setup.database.db.collection<{ _id: number; name: string; categoryId: number; status: string }>('pets');
    await raw.insertMany(
      Array.from({ length: stored }, (_, index) => ({
        _id: index + 1,
        name: `pet ${index + 1}`,
        categoryId: 1,
        status: 'available',
      })),
    );
    const reader = setup.follow({ afterId: 1, status: 'sold' });
    expect(await reader.next(2_000)).toBe('quiet');
    // The tail's start: the highest id, then the last batch below it and the empty read after it.
    expect(setup.counts.readAfter).toBeLessThanOrEqual(3);
    expect(setup.counts.listPage).toBe(1);
    const [sold] = await setup.add(pet('the first sold one', 'sold'));
    expect(ids(await reader.take(1, EACH_MS))).toEqual([sold?.id]);
    expect(setup.counts.listPage).toBe(1);
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
    expect(setup.counts.highestId + setup.counts.readAfter + setup.counts.listPage).toBe(0);
  });
});
