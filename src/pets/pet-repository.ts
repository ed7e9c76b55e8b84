import { setTimeout as sleep } from 'node:timers/promises';
import type { Collection, Db } from 'mongodb';
import { createDatabaseCalls, createSerialQueue, withSignal } from '../db/deadline.ts';
import { isDuplicateKey } from '../db/driver-errors.ts';
import { ClientGoneError, CorruptPetError, IdAllocationError, PetIdTakenError } from '../errors.ts';
import { MAX_INT64_EXACT, type NewPet, type Pet, type PetPage, type PetPageQuery } from './pet.ts';
import { describeId, type PetDocument, readPet, type StoredDocument, toPet } from './pet-document.ts';

export interface CreateOptions {
  /** True once whoever asked has gone: the pet is then not stored, and no id is spent on it. */
  clientGone?: () => boolean;
  /**
   * Store the pet under this id, taken earlier from allocateId (an idempotent create records it
   * first); if a pet already has it, PetIdTakenError. Without it the repository allocates one.
   */
  id?: number;
}

export interface PetRepository {
  create(newPet: NewPet, options?: CreateOptions): Promise<Pet>;
  /** A fresh id no pet has been given, for a create that must know its id before it runs. */
  allocateId(options?: { clientGone?: () => boolean }): Promise<number>;
  findById(id: number): Promise<Pet | null>;
  listPage(query: PetPageQuery): Promise<PetPage>;
}

export interface MongoPetRepository extends PetRepository {
  /** How many distinct stored documents were found unreadable so far (for a metric). */
  corruptDocumentsSeen(): number;
}

interface CounterDocument {
  _id: string;
  seq: number;
}

const PETS = 'pets';
const COUNTERS = 'counters';
const PET_ID_COUNTER = 'petId';
/** Each retry takes a fresh id; more than a handful in a row means something else is wrong. */
const MAX_ID_ATTEMPTS = 10;
/** Upper bound of the random pause after a collision, so racing instances fall out of step. */
const COLLISION_JITTER_MS = 20;
/** The whole of one call, queue and retries included: the 503 must reach the client within 6 s. */
export const DEFAULT_DEADLINE_MS = 4_500;
/** Reported ids are remembered so each is logged once; past this many, new ones go unreported. */
const MAX_REPORTED_IDS = 10_000;

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
  /** Longest a call may take, waiting in the id queue included; then DatabaseUnavailableError. */
  deadlineMs?: number;
  /** Told once per document that does not fit the pet shape; such documents are left out of pages. */
  onCorruptDocument?: (id: string, problem: string) => void;
  /** Told of every call that failed because the database was unreachable or slow (a metric). */
  onDatabaseUnavailable?: (operation: string) => void;
}

export function createMongoPetRepository(db: Db, options: PetRepositoryOptions): MongoPetRepository {
  const pets: Collection<PetDocument> = db.collection<PetDocument>(PETS);
  const counters: Collection<CounterDocument> = db.collection<CounterDocument>(COUNTERS);
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  // Other instances may still race us; the unique _id and the resync below handle those collisions.
  const queue = createSerialQueue();
  const oneAtATime = <T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> =>
    options.serializeIdAllocation ? queue(signal, task) : task();

  const reported = new Set<string>();
  let corruptSeen = 0;
  function report(doc: StoredDocument, problem: string): void {
    const id = describeId(doc._id);
    if (reported.has(id) || reported.size >= MAX_REPORTED_IDS) return;
    reported.add(id);
    corruptSeen++;
    options.onCorruptDocument?.(id, problem);
  }

  /** The pet of a document, or null (reported) when the document is not one. */
  function read(doc: StoredDocument): Pet | null {
    const { pet, problem } = readPet(doc);
    if (problem !== undefined) report(doc, problem);
    return pet ?? null;
  }

  async function incrementCounter(signal: AbortSignal): Promise<number> {
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

  /** Checked when the task leaves the queue: an id is never spent on a client that has gone. */
  const nextId = (signal: AbortSignal, clientGone: () => boolean) =>
    oneAtATime(signal, () => {
      if (clientGone()) throw new ClientGoneError();
      return incrementCounter(signal);
    });

  /**
   * FerretDB v1 runs findAndModify without a transaction, so two callers can read the same counter
   * value and one increment can overwrite a later one. Moving the counter up to the highest stored id
   * lets the next allocation leave the collided range instead of colliding again and again.
   */
  async function resyncCounter(signal: AbortSignal): Promise<void> {
    // Only ids a pet can have: a stored string or 1e300 would otherwise become the counter.
    const highest = await pets
      .find({ _id: { $gte: 1, $lte: MAX_INT64_EXACT } }, { projection: { _id: 1 }, signal })
      .sort({ _id: -1 })
      .limit(1)
      .next();
    if (highest) {
      await counters.updateOne(
        { _id: PET_ID_COUNTER },
        { $max: { seq: Math.ceil(highest._id) } },
        withSignal({ upsert: true }, signal),
      );
    }
  }

  function documentOf(id: number, newPet: NewPet): PetDocument {
    const doc: PetDocument = { _id: id, name: newPet.name, categoryId: newPet.categoryId };
    if (newPet.status !== undefined) doc.status = newPet.status;
    return doc;
  }

  /** Stores the pet under an id allocated earlier; only the unique _id stands between it and a copy. */
  async function createWithId(id: number, newPet: NewPet, clientGone: () => boolean, signal: AbortSignal) {
    if (clientGone()) throw new ClientGoneError();
    const doc = documentOf(id, newPet);
    try {
      await pets.insertOne(doc, withSignal({}, signal));
      return toPet(doc);
    } catch (error) {
      throw isDuplicateKey(error) ? new PetIdTakenError(id) : error;
    }
  }

  async function create(newPet: NewPet, clientGone: () => boolean, signal: AbortSignal): Promise<Pet> {
    for (let attempt = 1; attempt <= MAX_ID_ATTEMPTS; attempt++) {
      const doc = documentOf(await nextId(signal, clientGone), newPet);
      // The id may have taken long to come (a stalled database): store nothing for a client that left.
      if (clientGone()) throw new ClientGoneError();
      try {
        // The unique _id is the final guard: the counter alone cannot promise uniqueness here.
        await pets.insertOne(doc, withSignal({}, signal));
        return toPet(doc);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        await oneAtATime(signal, () => resyncCounter(signal));
        await sleep(Math.random() * COLLISION_JITTER_MS);
      }
    }
    throw new IdAllocationError(MAX_ID_ATTEMPTS);
  }

  async function findById(id: number, signal: AbortSignal): Promise<Pet | null> {
    // Typed as pets, read as whatever is stored: `problemWith` decides whether it is a pet.
    const doc: StoredDocument | null = await pets.findOne({ _id: id }, { signal });
    if (!doc) return null;
    const { pet, problem } = readPet(doc);
    if (pet) return pet;
    report(doc, problem);
    throw new CorruptPetError(id, problem);
  }

  /**
   * Keyset pages of readable pets. Unreadable documents are skipped, so a page may need more
   * documents than `limit + 1`: it reads on after the last document seen, readable or not, until
   * it has one pet more than the page (that one only says a next page exists) or the end.
   */
  async function listPage({ limit, status, afterId }: PetPageQuery, signal: AbortSignal): Promise<PetPage> {
    const found: Pet[] = [];
    let after: unknown = afterId;
    for (;;) {
      const filter: Record<string, unknown> = {};
      if (status !== undefined) filter.status = status;
      if (after !== undefined) filter._id = { $gt: after };
      const docs: StoredDocument[] = await pets
        .find(filter, { signal })
        .sort({ _id: 1 })
        .limit(limit + 1)
        .toArray();
      for (const doc of docs) {
        const pet = read(doc);
        if (pet) found.push(pet);
      }
      const last = docs.at(-1);
      if (found.length > limit || docs.length <= limit || last === undefined) break;
      after = last._id;
    }
    return { pets: found.slice(0, limit), hasNextPage: found.length > limit };
  }

  const call = createDatabaseCalls(deadlineMs, options.onDatabaseUnavailable);
  const never = () => false;
  return {
    create: (newPet, { clientGone = never, id } = {}) =>
      call('pets.create', (signal) =>
        id === undefined ? create(newPet, clientGone, signal) : createWithId(id, newPet, clientGone, signal),
      ),
    allocateId: ({ clientGone = never } = {}) => call('pets.allocateId', (signal) => nextId(signal, clientGone)),
    findById: (id) => call('pets.findById', (signal) => findById(id, signal)),
    listPage: (query) => call('pets.listPage', (signal) => listPage(query, signal)),
    corruptDocumentsSeen: () => corruptSeen,
  };
}
