import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PetIdTakenError } from '../src/errors.ts';
import type { Pet } from '../src/pets/pet.ts';
import { announcingCreates, createLocalPetChanges, type PetChanges } from '../src/pets/pet-changes.ts';
import { createPetFeed } from '../src/pets/pet-feed.ts';
import { createRedisPetChanges } from '../src/pets/redis-pet-changes.ts';
import { capturingLogger } from './support/capturing-logger.ts';
import { freshPets, readerOf, until } from './support/feed-reader.ts';
import { freePort } from './support/free-port.ts';
import { type RedisServer, startRedisServer } from './support/redis-server.ts';

const silent = pino({ level: 'silent' });
const newPet = { name: 'Rex', categoryId: 1 };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** How long a call took, in ms. */
async function timed<T>(run: () => T | Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await run();
  return { ms: performance.now() - started, value };
}

describe('when pets change within one instance', () => {
  it('then every listener hears each announcement, a throwing one does not silence the others, and unsubscribed ones hear nothing', async () => {
    const changes = createLocalPetChanges();
    const heard: string[] = [];
    changes.onChange(() => {
      throw new Error('a listener with a bug');
    });
    const stop = changes.onChange(() => heard.push('a'));
    changes.onChange(() => heard.push('b'));
    expect(() => changes.announce()).not.toThrow();
    stop();
    changes.announce();
    expect(heard).toEqual(['a', 'b', 'b']);
    await changes.close();
    changes.announce();
    expect(heard).toHaveLength(3);
  });

  it('then a stored pet is announced once, and a create that fails announces nothing', async () => {
    const fresh = await freshPets();
    cleanups.push(fresh.drop);
    const changes = createLocalPetChanges();
    let heard = 0;
    changes.onChange(() => heard++);
    const pets = announcingCreates(fresh.pets, changes);
    const pet = await pets.create(newPet);
    expect(heard).toBe(1);
    await expect(pets.create(newPet, { id: pet.id })).rejects.toBeInstanceOf(PetIdTakenError);
    expect(heard).toBe(1);
    expect(await pets.findById(pet.id)).toEqual(pet);
    expect((await pets.readAfter(pet.id - 1, 10)).map((entry) => entry.id)).toEqual([pet.id]);
  });
});

describe('when two instances share a database and a Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  /** Instance A follows; instance B creates through its announcing repository. */
  async function twoInstances(pollMs: number) {
    const fresh = await freshPets();
    const changesA = createRedisPetChanges({ url: redis.url, logger: silent });
    const changesB = createRedisPetChanges({ url: redis.url, logger: silent });
    const feed = createPetFeed({ pets: fresh.pets, changes: changesA, pollMs, settleMs: 1_000, logger: silent });
    const controller = new AbortController();
    cleanups.push(async () => {
      redis.thaw();
      controller.abort();
      await feed.close();
      await Promise.all([changesA.close(), changesB.close()]);
      await fresh.drop();
    });
    const reader = readerOf(feed.follow({ afterId: await fresh.pets.highestId() }, controller.signal));
    expect(await reader.next(1)).toBe('quiet');
    return { reader, creator: announcingCreates(fresh.pets, changesB), changesA, changesB };
  }

  /** Waits until Redis carries a message from B to A: both connected and subscribed. */
  async function connected(changesA: PetChanges, changesB: PetChanges) {
    let heard = 0;
    const stop = changesA.onChange(() => heard++);
    await until(
      () => {
        changesB.announce();
        return heard > 0;
      },
      5_000,
      'Redis carries an announcement from one instance to the other',
    );
    stop();
  }

  it('then a pet created on one is seen by a follower on the other by notification, well inside the timer', async () => {
    const pollMs = 10_000;
    const { reader, creator, changesA, changesB } = await twoInstances(pollMs);
    await connected(changesA, changesB);
    const { ms, value: pet } = await timed(() => creator.create(newPet));
    const seen = await timed(() => reader.take(1, 2_000));
    expect(seen.value.map((one: Pet) => one.id)).toEqual([pet.id]);
    expect(ms + seen.ms).toBeLessThan(pollMs / 5);
  });

  it('then with Redis frozen a create still returns promptly, and the follower sees it by the timer', async () => {
    const pollMs = 500;
    const { reader, creator, changesA, changesB } = await twoInstances(pollMs);
    await connected(changesA, changesB);
    redis.freeze();
    const created: Pet[] = [];
    for (let index = 0; index < 3; index++) {
      const { ms, value } = await timed(() => creator.create({ ...newPet, name: `frozen ${index}` }));
      expect(ms).toBeLessThan(1_000);
      created.push(value);
    }
    const seen = await reader.take(3, 3 * pollMs);
    expect(seen.map((one) => one.id)).toEqual(created.map((one) => one.id));
  });
});

describe('when Redis is frozen or absent', () => {
  it('then announce never throws or waits, tells this instance at once, and close ends within its deadline', async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    const { logger, lines } = capturingLogger();
    const frozen = createRedisPetChanges({ url: redis.url, logger });
    const absent = createRedisPetChanges({ url: `redis://127.0.0.1:${await freePort()}`, logger: silent });
    redis.freeze();
    for (const changes of [frozen, absent]) {
      let heard = 0;
      changes.onChange(() => heard++);
      const { ms } = await timed(() => {
        for (let index = 0; index < 10_000; index++) changes.announce();
      });
      expect(heard).toBe(10_000);
      expect(ms).toBeLessThan(1_000);
    }
    await until(() => lines.some((line) => line.msg?.startsWith('Redis does not carry')), 5_000, 'the warning');
    expect(lines.filter((line) => line.msg?.startsWith('Redis does not carry'))).toHaveLength(1);
    const { ms } = await timed(() => Promise.all([frozen.close(), absent.close()]));
    expect(ms).toBeLessThan(2_000);
  });
});
