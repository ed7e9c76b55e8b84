import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Collection,
  type Db,
  MongoClientClosedError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import pLimit from 'p-limit';
import { DatabaseUnavailableError, IdAllocationError } from '../errors.ts';
import type { NewPet, Pet, PetPage, PetPageQuery, PetStatus } from './pet.ts';

export interface PetRepository {
  create(newPet: NewPet): Promise<Pet>;
  findById(id: number): Promise<Pet | null>;
  listPage(query: PetPageQuery): Promise<PetPage>;
}

/** Stored shape: the pet's id is the document's `_id`, so lookups by id hit the primary key. */
interface PetDocument {
  _id: number;
  name: string;
  categoryId: number;
  status?: PetStatus;
}

interface CounterDocument {
  _id: string;
  seq: number;
}

const PETS = 'pets';
const COUNTERS = 'counters';
const PET_ID_COUNTER = 'petId';
const DUPLICATE_KEY = 11000;
/** Each retry takes a fresh id; more than a handful in a row means something else is wrong. */
const MAX_ID_ATTEMPTS = 10;
/** Upper bound of the random pause after a collision, so racing instances fall out of step. */
const COLLISION_JITTER_MS = 20;

function toPet(doc: PetDocument): Pet {
  const pet: Pet = { id: doc._id, name: doc.name, categoryId: doc.categoryId };
  if (doc.status !== undefined && doc.status !== null) pet.status = doc.status;
  return pet;
}

function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

/** Driver errors that mean "no answer from the database", as opposed to a query it refused. */
function isUnavailable(error: unknown): boolean {
  return (
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoOperationTimeoutError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoClientClosedError
  );
}

/** The one place driver errors become domain errors, so no layer above imports the driver. */
async function translated<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    throw isUnavailable(error) ? new DatabaseUnavailableError({ cause: error }) : error;
  }
}

/** Creates the indexes the queries below rely on; idempotent, run at start. */
export async function ensurePetIndexes(db: Db): Promise<void> {
  await db.collection<PetDocument>(PETS).createIndex({ status: 1, _id: 1 }, { name: 'status_id' });
}

export interface PetRepositoryOptions {
  /**
   * Allocate ids one at a time in this process. Needed on FerretDB, where concurrent findAndModify
   * calls can hand out the same value and 100 of them at once collide over and over; on MongoDB
   * `$inc` is atomic and this would only serialise every create.
   */
  serializeIdAllocation: boolean;
}

export function createMongoPetRepository(db: Db, options: PetRepositoryOptions): PetRepository {
  const pets: Collection<PetDocument> = db.collection<PetDocument>(PETS);
  const counters: Collection<CounterDocument> = db.collection<CounterDocument>(COUNTERS);
  // Other instances may still race us; the unique _id and the resync below handle those collisions.
  const limit = pLimit(1);
  const oneAtATime = <T>(task: () => Promise<T>): Promise<T> => (options.serializeIdAllocation ? limit(task) : task());

  async function incrementCounter(): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        const counter = await counters.findOneAndUpdate(
          { _id: PET_ID_COUNTER },
          { $inc: { seq: 1 } },
          { upsert: true, returnDocument: 'after' },
        );
        if (!counter) throw new Error('counter upsert returned no document');
        return counter.seq;
      } catch (error) {
        // Two first-ever upserts can race on the counter's own _id; the loser simply tries again.
        if (!isDuplicateKey(error) || attempt >= 2) throw error;
      }
    }
  }

  const nextId = () => oneAtATime(incrementCounter);

  /**
   * FerretDB v1 runs findAndModify without a transaction, so two callers can read the same counter
   * value and one increment can overwrite a later one. Moving the counter up to the highest stored id
   * lets the next allocation leave the collided range instead of colliding again and again.
   */
  async function resyncCounter(): Promise<void> {
    const highest = await pets
      .find({}, { projection: { _id: 1 } })
      .sort({ _id: -1 })
      .limit(1)
      .next();
    if (highest) {
      await counters.updateOne({ _id: PET_ID_COUNTER }, { $max: { seq: highest._id } }, { upsert: true });
    }
  }

  async function create(newPet: NewPet): Promise<Pet> {
    for (let attempt = 1; attempt <= MAX_ID_ATTEMPTS; attempt++) {
      const doc: PetDocument = {
        _id: await nextId(),
        name: newPet.name,
        categoryId: newPet.categoryId,
      };
      if (newPet.status !== undefined) doc.status = newPet.status;
      try {
        // The unique _id is the final guard: the counter alone cannot promise uniqueness here.
        await pets.insertOne(doc);
        return toPet(doc);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        await oneAtATime(resyncCounter);
        await sleep(Math.random() * COLLISION_JITTER_MS);
      }
    }
    throw new IdAllocationError(MAX_ID_ATTEMPTS);
  }

  async function findById(id: number): Promise<Pet | null> {
    const doc = await pets.findOne({ _id: id });
    return doc ? toPet(doc) : null;
  }

  async function listPage({ limit, status, afterId }: PetPageQuery): Promise<PetPage> {
    const filter: Record<string, unknown> = {};
    if (status !== undefined) filter.status = status;
    if (afterId !== undefined) filter._id = { $gt: afterId };
    // One extra document tells whether a next page exists without a second query or a count.
    const docs = await pets
      .find(filter)
      .sort({ _id: 1 })
      .limit(limit + 1)
      .toArray();
    return {
      pets: docs.slice(0, limit).map(toPet),
      hasNextPage: docs.length > limit,
    };
  }

  return {
    create: (newPet) => translated(create(newPet)),
    findById: (id) => translated(findById(id)),
    listPage: (query) => translated(listPage(query)),
  };
}
