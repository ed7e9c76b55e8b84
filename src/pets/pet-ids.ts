import { setTimeout as sleep } from 'node:timers/promises';
import type { Collection, Db } from 'mongodb';
import { createSerialQueue, withSignal } from '../db/deadline.ts';
import { isDuplicateKey } from '../db/driver-errors.ts';
import { ClientGoneError } from '../errors.ts';
import { MAX_INT64_EXACT } from './pet.ts';
import { PETS_COLLECTION, type PetDocument } from './pet-document.ts';

interface CounterDocument {
  _id: string;
  seq: number;
}

const COUNTERS = 'counters';
const PET_ID_COUNTER = 'petId';
/** Upper bound of the random pause after a collision, so racing instances fall out of step. */
const COLLISION_JITTER_MS = 20;

/**
 * Pet ids from one counter document; only the pets' unique `_id` makes them unique for sure.
 * `serialize`: one allocation at a time in this process. FerretDB runs findAndModify without a
 * transaction, so concurrent increments hand out one value twice; on MongoDB `$inc` is atomic.
 */
export function createPetIds(db: Db, { serialize }: { serialize: boolean }) {
  const pets = db.collection<PetDocument>(PETS_COLLECTION);
  const counters = db.collection<CounterDocument>(COUNTERS);
  const queue = createSerialQueue();
  const oneAtATime = <T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> =>
    serialize ? queue(signal, task) : task();

  async function increment(signal: AbortSignal): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        const counter = await counters.findOneAndUpdate(
          { _id: PET_ID_COUNTER },
          { $inc: { seq: 1 } },
          withSignal({ upsert: true, returnDocument: 'after' as const }, signal),
        );
        if (!counter) throw new Error('counter upsert returned no document');
        return counter.seq;
      } catch (error) {
        // Two first-ever upserts can race on the counter's own _id; the loser simply tries again.
        if (!isDuplicateKey(error) || attempt >= 2) throw error;
      }
    }
  }

  /** The next allocation then leaves the collided range instead of colliding again and again. */
  async function resync(signal: AbortSignal): Promise<void> {
    const highest = await highestStoredId(pets, signal);
    if (highest === undefined) return;
    await counters.updateOne(
      { _id: PET_ID_COUNTER },
      { $max: { seq: Math.ceil(highest) } },
      withSignal({ upsert: true }, signal),
    );
  }

  return {
    /** The next id; ClientGoneError, with no id spent, if the client left while the call waited its turn. */
    next: (signal: AbortSignal, clientGone: () => boolean): Promise<number> =>
      oneAtATime(signal, () => {
        if (clientGone()) throw new ClientGoneError();
        return increment(signal);
      }),
    /** After an id turned out taken: moves the counter past every stored id, then pauses a random moment. */
    async recoverFromCollision(signal: AbortSignal): Promise<void> {
      await oneAtATime(signal, () => resync(signal));
      await sleep(Math.random() * COLLISION_JITTER_MS);
    },
  };
}

export type PetIds = ReturnType<typeof createPetIds>;

/** The highest stored id a pet can have (not a stored string or 1e300), undefined when none. */
export async function highestStoredId(pets: Collection<PetDocument>, signal: AbortSignal): Promise<number | undefined> {
  const highest = await pets
    .find({ _id: { $gte: 1, $lte: MAX_INT64_EXACT } }, { projection: { _id: 1 }, signal })
    .sort({ _id: -1 })
    .limit(1)
    .next();
  return highest ? Number(highest._id) : undefined;
}

/** The highest id a pet can have among the stored ones, 0 when none; rounded down, so a stored 5.5 leaves 6 still to come. */
export async function highestId(pets: Collection<PetDocument>, signal: AbortSignal): Promise<number> {
  return Math.floor((await highestStoredId(pets, signal)) ?? 0);
}
