import type { Collection, Db } from 'mongodb';
import { createDatabaseCalls, DATABASE_DEADLINE_MS, withSignal } from '../db/deadline.ts';
import { isDuplicateKey } from '../db/driver-errors.ts';
import { ClientGoneError, CorruptPetError, PetIdsContendedError, PetIdTakenError } from '../errors.ts';
import { MAX_INT64_EXACT, type NewPet, type Pet, type PetPage, type PetPageQuery } from './pet.ts';
import {
  describeId,
  documentOf,
  PETS_COLLECTION,
  type PetDocument,
  readPet,
  type StoredDocument,
  toPet,
} from './pet-document.ts';
import { createPetIds, highestId, type PetIds } from './pet-ids.ts';

/** A stored document in id order: its pet, or null when it is not one (so it is not taken for a gap). */
export interface StoredEntry {
  id: number;
  pet: Pet | null;
}

type Read = (doc: StoredDocument) => Pet | null;

/** Keyset pages of readable pets: unreadable documents are skipped, reading on until one pet past the page. */
export async function readPage(
  pets: Collection<PetDocument>,
  read: Read,
  { limit, status, afterId, signal }: PetPageQuery & { signal: AbortSignal },
): Promise<PetPage> {
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

/** Every stored document with a numeric id above `afterId`, in id order, readable or not. */
export async function readAfter(
  pets: Collection<PetDocument>,
  read: Read,
  { afterId, limit, signal }: { afterId: number; limit: number; signal: AbortSignal },
): Promise<StoredEntry[]> {
  const docs: StoredDocument[] = await pets
    .find({ _id: { $gt: afterId, $lte: MAX_INT64_EXACT } }, { signal })
    .sort({ _id: 1 })
    .limit(limit)
    .toArray();
  // A numeric id of another BSON type (Long, Decimal128) still holds its place in the order.
  return docs.map((doc) => ({ id: typeof doc._id === 'number' ? doc._id : Number(String(doc._id)), pet: read(doc) }));
}

export interface CreateOptions {
  /** True once whoever asked has gone: the pet is then not stored, and no id is spent on it. */
  clientGone?: () => boolean;
  /** An id taken earlier from allocateId (PetIdTakenError if a pet has it); by default, a fresh one. */
  id?: number;
}

export interface PetRepository {
  create(newPet: NewPet, options?: CreateOptions): Promise<Pet>;
  /** A fresh id no pet has been given, for a create that must know its id before it runs. */
  allocateId(options?: { clientGone?: () => boolean }): Promise<number>;
  findById(id: number): Promise<Pet | null>;
  listPage(query: PetPageQuery): Promise<PetPage>;
  /** The highest stored pet id, 0 when there is none: where a feed with no cursor starts. */
  highestId(): Promise<number>;
  /** Up to `limit` stored documents above `afterId`, in id order; unreadable ones as `pet: null`, not gaps. */
  readAfter(afterId: number, limit: number): Promise<StoredEntry[]>;
}

export interface MongoPetRepository extends PetRepository {
  /** How many distinct stored documents were found unreadable so far (for a metric). */
  corruptDocumentsSeen(): number;
}

/** Each retry takes a fresh id; more than a handful in a row means something else is wrong. */
const MAX_ID_ATTEMPTS = 10;
/** Reported ids are remembered so each is logged once; past this many, new ones go unreported. */
const MAX_REPORTED_IDS = 10_000;

/** Creates the indexes the queries below rely on; idempotent, run at start. */
export async function ensurePetIndexes(db: Db): Promise<void> {
  await db.collection<PetDocument>(PETS_COLLECTION).createIndex({ status: 1, _id: 1 }, { name: 'status_id' });
}

export interface PetRepositoryOptions {
  /** Allocate ids one at a time in this process: needed on FerretDB (see pet-ids.ts). */
  serializeIdAllocation: boolean;
  /** Longest a call may take, waiting in the id queue included; then DatabaseUnavailableError. */
  deadlineMs?: number;
  /** Told once per document that does not fit the pet shape; such documents are left out of pages. */
  onCorruptDocument?: (id: string, problem: string) => void;
  /** Told of every call that failed because the database was unreachable or slow (a metric). */
  onDatabaseUnavailable?: (operation: string) => void;
}

/** Tells each unreadable document once; past MAX_REPORTED_IDS, new ones go untold. */
function createCorruptReports(onCorruptDocument?: (id: string, problem: string) => void) {
  const reported = new Set<string>();
  return {
    report(doc: StoredDocument, problem: string): void {
      const id = describeId(doc._id);
      if (reported.has(id) || reported.size >= MAX_REPORTED_IDS) return;
      reported.add(id);
      onCorruptDocument?.(id, problem);
    },
    seen: () => reported.size,
  };
}

interface Insert {
  newPet: NewPet;
  clientGone: () => boolean;
  signal: AbortSignal;
}

/**
 * Stores the pet under `id`, allocated earlier, or under a fresh id retried on a collision: only the
 * unique _id guarantees uniqueness. A collision moves the counter past the stored ids first.
 */
async function insert(pets: Collection<PetDocument>, ids: PetIds, id: number | undefined, request: Insert) {
  const { newPet, clientGone, signal } = request;
  for (let attempt = 1; attempt <= MAX_ID_ATTEMPTS; attempt++) {
    const doc = documentOf(id ?? (await ids.next(signal, clientGone)), newPet);
    // The id may have taken long to come (a stalled database): store nothing for a client that left.
    if (clientGone()) throw new ClientGoneError();
    try {
      await pets.insertOne(doc, withSignal({}, signal));
      return toPet(doc);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      await ids.recoverFromCollision(signal);
      if (id !== undefined) throw new PetIdTakenError(id);
    }
  }
  throw new PetIdsContendedError(MAX_ID_ATTEMPTS);
}

export function createMongoPetRepository(db: Db, options: PetRepositoryOptions): MongoPetRepository {
  const pets: Collection<PetDocument> = db.collection<PetDocument>(PETS_COLLECTION);
  // Other instances may still race us: the unique _id and the resync after a collision handle those.
  const ids = createPetIds(db, { serialize: options.serializeIdAllocation });
  const corrupt = createCorruptReports(options.onCorruptDocument);

  /** The pet of a document, or null (reported) when the document is not one. */
  function read(doc: StoredDocument): Pet | null {
    const { pet, problem } = readPet(doc);
    if (problem !== undefined) corrupt.report(doc, problem);
    return pet ?? null;
  }

  async function findById(id: number, signal: AbortSignal): Promise<Pet | null> {
    // Typed as pets, read as whatever is stored: readPet decides whether it is a pet.
    const doc: StoredDocument | null = await pets.findOne({ _id: id }, { signal });
    if (!doc) return null;
    const { pet, problem } = readPet(doc);
    if (pet) return pet;
    corrupt.report(doc, problem);
    throw new CorruptPetError(id, problem);
  }

  const call = createDatabaseCalls(options.deadlineMs ?? DATABASE_DEADLINE_MS, options.onDatabaseUnavailable);
  const never = () => false;
  return {
    create: (newPet, { clientGone = never, id } = {}) =>
      call('pets.create', (signal) => insert(pets, ids, id, { newPet, clientGone, signal })),
    allocateId: ({ clientGone = never } = {}) => call('pets.allocateId', (signal) => ids.next(signal, clientGone)),
    findById: (id) => call('pets.findById', (signal) => findById(id, signal)),
    listPage: (query) => call('pets.listPage', (signal) => readPage(pets, read, { ...query, signal })),
    highestId: () => call('pets.highestId', (signal) => highestId(pets, signal)),
    readAfter: (afterId, limit) =>
      call('pets.readAfter', (signal) => readAfter(pets, read, { afterId, limit, signal })),
    corruptDocumentsSeen: corrupt.seen,
  };
}
