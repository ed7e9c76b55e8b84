import type { Collection, Db } from 'mongodb';
import { createDatabaseCalls, DATABASE_DEADLINE_MS, withSignal } from '../db/deadline.ts';
import { isDuplicateKey } from '../db/driver-errors.ts';

/** One Idempotency-Key of one API key: which request it was first used for, and the pet it creates. */
export interface IdempotencyRecord {
  /** `<API key id> <Idempotency-Key>`: keys are scoped per API key. */
  _id: string;
  /** SHA-256 of the request's meaning (the new pet), to tell a retry from a different request. */
  fingerprint: string;
  /** Allocated before the pet is stored, so a retry finds the pet even if the first answer was lost. */
  petId: number;
  createdAt: Date;
}

export const IDEMPOTENCY_COLLECTION = 'idempotencyKeys';

/** A record's `_id`: the Idempotency-Key within its API key's scope. */
export function idempotencyRecordId(apiKeyId: string, idempotencyKey: string): string {
  return `${apiKeyId} ${idempotencyKey}`;
}

/** Where records live: each call may fail with DatabaseUnavailableError. */
export interface IdempotencyStore {
  find(id: string): Promise<IdempotencyRecord | null>;
  /** Stores the record unless the key is taken already: true when this call claimed it. */
  claim(record: IdempotencyRecord): Promise<boolean>;
  /** Points an unfinished record at another pet id (its first was taken); false if it no longer had `from`. */
  movePetId(id: string, from: number, to: number): Promise<boolean>;
  /** Removes one expired record, unless another request replaced it meanwhile. */
  forget(record: IdempotencyRecord): Promise<void>;
  /** Deletes records created before `before`; how many went. */
  purgeCreatedBefore(before: Date): Promise<number>;
}

/** The purge deletes by age; on MongoDB this index keeps it from scanning every record. */
export async function ensureIdempotencyIndexes(db: Db): Promise<void> {
  await db.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION).createIndex({ createdAt: 1 }, { name: 'created' });
}

/**
 * The `idempotencyKeys` collection: a key is claimed by an insert on the unique `_id`, atomic on
 * FerretDB too (its findAndModify is not); records are purged by age, as FerretDB has no TTL index.
 */
export function createIdempotencyStore(
  db: Db,
  options: { deadlineMs?: number; onDatabaseUnavailable?: (operation: string) => void } = {},
): IdempotencyStore {
  const records: Collection<IdempotencyRecord> = db.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION);
  const call = createDatabaseCalls(options.deadlineMs ?? DATABASE_DEADLINE_MS, options.onDatabaseUnavailable);
  const bounded = <T>(work: (signal: AbortSignal) => Promise<T>) => call('idempotencyKeys', work);

  return {
    find: (id) => bounded((signal) => records.findOne({ _id: id }, { signal })),

    claim: (record) =>
      bounded(async (signal) => {
        try {
          await records.insertOne(record, withSignal({}, signal));
          return true;
        } catch (error) {
          if (isDuplicateKey(error)) return false;
          throw error;
        }
      }),

    movePetId: (id, from, to) =>
      bounded(async (signal) => {
        const moved = await records.updateOne(
          { _id: id, petId: from },
          { $set: { petId: to } },
          withSignal({}, signal),
        );
        return moved.matchedCount === 1;
      }),

    forget: (record) =>
      bounded(async (signal) => {
        await records.deleteOne({ _id: record._id, createdAt: record.createdAt }, withSignal({}, signal));
      }),

    purgeCreatedBefore: (before) =>
      bounded(
        async (signal) =>
          (await records.deleteMany({ createdAt: { $lt: before } }, withSignal({}, signal))).deletedCount,
      ),
  };
}
