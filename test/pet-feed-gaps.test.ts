import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from './support/feed-reader.ts';
import {
  EACH_MS,
  type FeedSetup,
  followFromNow,
  ids,
  POLL_MS,
  pet,
  SETTLE_MS,
  setUpFeed,
} from './support/feed-setup.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const setUp = (options?: Parameters<typeof setUpFeed>[1]): Promise<FeedSetup> => setUpFeed(cleanups, options);
/** A window no loaded machine outlasts between two steps of a test: a pet delivered within EACH_MS was not held. */
const LONG_SETTLE_MS = 20_000;

describe('when ids are stored out of order', () => {
  it('then pets beyond a missing id wait for it and come in id order once it is stored', async () => {
    const setup = await setUp({ settleMs: LONG_SETTLE_MS });
    const reader = await followFromNow(setup);
    const first = await setup.pets.allocateId();
    const second = await setup.pets.allocateId();
    await setup.pets.create(pet('second'), { id: second });
    setup.changes.announce();
    expect(await reader.next(3 * POLL_MS)).toBe('quiet');
    await setup.pets.create(pet('first'), { id: first });
    setup.changes.announce();
    expect(ids(await reader.take(2, EACH_MS))).toEqual([first, second]);
  });

  it('then a gap that never fills is given up after the settle window, and a pet stored later under it is not delivered', async () => {
    const setup = await setUp();
    const reader = await followFromNow(setup);
    const missing = await setup.pets.allocateId();
    const started = Date.now();
    const stored = await setup.add(pet('beyond the gap'));
    expect(ids(await reader.take(1, SETTLE_MS + EACH_MS))).toEqual(ids(stored));
    expect(Date.now() - started).toBeGreaterThanOrEqual(SETTLE_MS - 100);
    await setup.pets.create(pet('too late'), { id: missing });
    const next = await setup.add(pet('next'));
    expect(ids(await reader.take(1, EACH_MS))).toEqual(ids(next));
  });

  it('then unreadable documents are skipped without holding back what follows', async () => {
    const setup = await setUp({ settleMs: LONG_SETTLE_MS });
    const reader = await followFromNow(setup);
    const raw = setup.database.db.collection<{ _id: number; name: unknown }>('pets');
    const unreadable = await setup.pets.allocateId();
    await raw.insertOne({ _id: unreadable, name: 42 });
    await raw.insertOne({ _id: unreadable + 0.5, name: 'not an integer id' });
    const after = await setup.add(pet('after the unreadable one'));
    expect(ids(await reader.take(1, EACH_MS))).toEqual(ids(after));
  });

  it('then more than a batch of documents with ids that are not integers are read past, not re-read forever', async () => {
    const setup = await setUp({ settleMs: LONG_SETTLE_MS });
    const reader = await followFromNow(setup);
    const raw = setup.database.db.collection<{ _id: number; name: string }>('pets');
    await raw.insertMany(Array.from({ length: 150 }, (_, index) => ({ _id: (index + 1) / 1_000, name: 'fraction' })));
    const looksBefore = setup.counts.readAfter;
    const after = await setup.add(pet('after the fractions'));
    expect(ids(await reader.take(1, EACH_MS))).toEqual(ids(after));
    await sleep(3 * POLL_MS);
    // A look reads two batches of fractions and the pet; the timer adds one look per POLL_MS.
    const elapsedLooks = setup.counts.readAfter - looksBefore;
    expect(elapsedLooks).toBeLessThan(100);
  });
});

describe('when the feed starts while an id below the newest is still on its way', () => {
  it('then that pet, stored within the window, comes in id order before the ones beyond it', async () => {
    const setup = await setUp({ settleMs: LONG_SETTLE_MS });
    for (let id = 1; id <= 9; id++) await setup.pets.create(pet(`pet ${id}`), { id });
    await setup.pets.create(pet('pet 11, stored first'), { id: 11 });
    const reader = setup.follow({ afterId: 9 });
    expect(await reader.next(1)).toBe('quiet'); // the first pull starts the tail
    await until(() => setup.counts.readAfter > 0, EACH_MS, 'the tail looks');
    await sleep(50);
    await setup.pets.create(pet('pet 10, stored late'), { id: 10 });
    setup.changes.announce();
    await setup.pets.create(pet('pet 12'), { id: 12 });
    setup.changes.announce();
    expect(ids(await reader.take(3, EACH_MS))).toEqual([10, 11, 12]);
  });

  it('then a follower without a cursor that joins while the tail holds at a gap gets nothing stored before it joined', async () => {
    const setup = await setUp({ settleMs: LONG_SETTLE_MS });
    const early = await followFromNow(setup);
    const missing = await setup.pets.allocateId();
    const looks = setup.counts.readAfter;
    const [beyond] = await setup.add(pet('beyond the gap, before the late follower'));
    await until(() => setup.counts.readAfter > looks, EACH_MS, 'the tail sees the pet beyond the gap');
    const late = await followFromNow(setup);
    await setup.pets.create(pet('fills the gap'), { id: missing });
    const [live] = await setup.add(pet('after the late follower joined'));
    expect(ids(await early.take(3, EACH_MS))).toEqual([missing, beyond?.id, live?.id]);
    expect(ids(await late.take(1, EACH_MS))).toEqual([live?.id]);
    expect(await late.next(3 * POLL_MS)).toBe('quiet');
  });
});
