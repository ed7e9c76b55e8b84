// Reads a pet feed's generator the way a transport does (one next() at a time), with every wait bounded.
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/mongo.ts';
import type { Pet } from '../../src/pets/pet.ts';
import type { PetRepository } from '../../src/pets/pet-repository.ts';
import { createPetRepository } from '../../src/stores.ts';
import { uniqueDbName } from './test-server.ts';

export interface FeedReader {
  /** The next pet within `withinMs`; 'quiet' if none came by then (the pull stays pending), 'done' when ended. */
  next(withinMs: number): Promise<Pet | 'quiet' | 'done'>;
  /** `count` pets, each within `eachWithinMs`; throws saying what came when one does not. */
  take(count: number, eachWithinMs: number): Promise<Pet[]>;
  /** Resolves true once the generator has ended, false if it has not within `withinMs`. */
  ends(withinMs: number): Promise<boolean>;
}

export function readerOf(generator: AsyncGenerator<Pet, void, undefined>): FeedReader {
  let pending: Promise<IteratorResult<Pet, void>> | undefined;
  const reader: FeedReader = {
    async next(withinMs) {
      pending ??= generator.next();
      const result = await Promise.race([pending, sleep(withinMs, 'quiet' as const, { ref: false })]);
      if (result === 'quiet') return 'quiet';
      pending = undefined;
      return result.done ? 'done' : result.value;
    },
    async take(count, eachWithinMs) {
      const pets: Pet[] = [];
      while (pets.length < count) {
        const next = await reader.next(eachWithinMs);
        if (typeof next === 'string') {
          throw new Error(`got ${JSON.stringify(pets.map((pet) => pet.id))}, then ${next} after ${eachWithinMs} ms`);
        }
        pets.push(next);
      }
      return pets;
    },
    async ends(withinMs) {
      const deadline = Date.now() + withinMs;
      for (;;) {
        const next = await reader.next(Math.max(1, deadline - Date.now()));
        if (next === 'done') return true;
        if (next === 'quiet') return false;
      }
    },
  };
  return reader;
}

/** A database of the test's own on the run's FerretDB, and the real repository over it. */
export async function freshPets(): Promise<{ database: Database; pets: PetRepository; drop(): Promise<void> }> {
  const database = await connectDatabase(inject('mongoUri'), uniqueDbName('feed'));
  return {
    database,
    pets: createPetRepository(database),
    async drop() {
      await database.db.dropDatabase();
      await database.close();
    },
  };
}

/** Waits until `check` holds, polling; throws after `withinMs`. */
export async function until(check: () => boolean, withinMs: number, what: string): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await sleep(10);
  }
}
