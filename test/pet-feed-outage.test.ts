import { afterEach, describe, expect, it } from 'vitest';
import { connectDatabase } from '../src/db/mongo.ts';
import { createLocalPetChanges } from '../src/pets/pet-changes.ts';
import { createPetFeed } from '../src/pets/pet-feed.ts';
import { createPetRepository } from '../src/stores.ts';
import { capturingLogger } from './support/capturing-logger.ts';
import { readerOf, until } from './support/feed-reader.ts';
import { counted, EACH_MS, ids, POLL_MS, pet, SETTLE_MS } from './support/feed-setup.ts';
import { startOwnDatabase } from './support/own-database.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A feed over a FerretDB of the test's own, which it may freeze (SIGSTOP). */
async function feedOnOwnDatabase(options: { deadlineMs: number; pollMs: number; recentSize?: number }) {
  const own = await startOwnDatabase();
  cleanups.push(() => own.remove());
  const database = await connectDatabase(own.uri, 'feed_outage');
  cleanups.push(() => database.close());
  const { pets, counts } = counted(createPetRepository(database, { deadlineMs: options.deadlineMs }));
  const changes = createLocalPetChanges();
  const { logger, lines } = capturingLogger();
  const feed = createPetFeed({ pets, changes, settleMs: SETTLE_MS, logger, ...options });
  // Thawed before the feed closes: a frozen database must not hold up the next test.
  cleanups.push(async () => {
    own.thaw();
    await feed.close();
  });
  const follow = (afterId?: number) => {
    const controller = new AbortController();
    const query = afterId === undefined ? {} : { afterId };
    return { ...readerOf(feed.follow(query, controller.signal)), abort: () => controller.abort() };
  };
  return { own, pets, counts, changes, lines, follow };
}

describe('when the database stops answering under a follower', () => {
  it('then the stream stays open, the failure is logged once, and pets come again once it answers', async () => {
    const { own, pets, changes, lines, follow } = await feedOnOwnDatabase({ deadlineMs: 300, pollMs: POLL_MS });
    const reader = follow(0);
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

  it('then a follower catching up reads again at the slow timer, not at every notification', async () => {
    const feed = await feedOnOwnDatabase({ deadlineMs: 100, pollMs: 60_000, recentSize: 1 });
    const stored = [await feed.pets.create(pet('a')), await feed.pets.create(pet('b'))];
    const live = feed.follow();
    expect(await live.next(1)).toBe('quiet'); // starts the tail
    await until(() => feed.counts.readAfter > 0, EACH_MS, 'the tail looks');
    feed.own.freeze();
    const behind = feed.follow(0);
    expect(await behind.next(1)).toBe('quiet');
    await until(() => feed.counts.listPage > 0, EACH_MS, 'the follower reads');
    // Each notification is a look that fails at the deadline: before, each woke the follower to read.
    for (let beat = 0; beat < 50; beat++) {
      feed.changes.announce();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(feed.counts.listPage).toBe(1);
    feed.own.thaw();
    // Looks until one reads (the first after the thaw may still meet the short deadline).
    await until(
      () => {
        feed.changes.announce();
        return feed.counts.listPage > 1;
      },
      // A just-thawed FerretDB on a loaded machine may miss the 100 ms deadline for a while.
      4 * EACH_MS,
      'a look that reads wakes the follower',
    );
    expect(ids(await behind.take(2, EACH_MS))).toEqual(ids(stored));
  });

  it('then a follower that leaves during a read that hangs ends at once, not at the read’s deadline', async () => {
    const feed = await feedOnOwnDatabase({ deadlineMs: 10_000, pollMs: POLL_MS, recentSize: 1 });
    await feed.pets.create(pet('a'));
    await feed.pets.create(pet('b'));
    const live = feed.follow();
    expect(await live.next(1)).toBe('quiet');
    await until(() => feed.counts.readAfter > 0, EACH_MS, 'the tail looks');
    feed.own.freeze();
    const behind = feed.follow(0);
    expect(await behind.next(1)).toBe('quiet');
    await until(() => feed.counts.listPage > 0, EACH_MS, 'the follower reads');
    const started = Date.now();
    behind.abort();
    expect(await behind.ends(EACH_MS)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
