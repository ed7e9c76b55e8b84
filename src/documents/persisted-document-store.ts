import type { Collection, Db } from 'mongodb';
import { MongoServerError } from 'mongodb';
import { DATABASE_DEADLINE_MS, withDeadline, withSignal } from '../db/deadline.ts';

export const PERSISTED_DOCUMENTS_COLLECTION = 'persistedDocuments';

export type OperationType = 'query' | 'mutation' | 'subscription';

/** One operation of a published document, as `documents list` shows it. */
export interface DocumentOperation {
  name: string | null;
  type: OperationType;
}

/** A document to publish: its id is the SHA-256 of `document`, checked before it gets here. */
export interface PublishableDocument {
  id: string;
  document: string;
  operations: DocumentOperation[];
}

export interface PersistedDocument extends PublishableDocument {
  publishedAt: Date;
}

interface PersistedDocumentRecord {
  /** `sha256:<hex>` of `document`. */
  _id: string;
  document: string;
  operations: DocumentOperation[];
  publishedAt: Date;
}

export interface PublishOutcome {
  /** Ids stored by this call. */
  published: string[];
  /** Ids that were stored already (by an earlier publish, or another one at the same time). */
  alreadyPublished: string[];
}

const DUPLICATE_KEY = 11_000;

const bounded = <T>(work: (signal: AbortSignal) => Promise<T>) => withDeadline(DATABASE_DEADLINE_MS, work);

const toDocument = ({ _id, document, operations, publishedAt }: PersistedDocumentRecord): PersistedDocument => ({
  id: _id,
  document,
  operations,
  publishedAt,
});

/** The names of every published operation: each has its own metric label (operation-labels.ts). */
async function operationNamesIn(documents: Collection<PersistedDocumentRecord>): Promise<string[]> {
  const records = await bounded((signal) =>
    documents.find({}, { projection: { _id: 0, operations: 1 }, signal }).toArray(),
  );
  return records.flatMap((record) => record.operations.flatMap((operation) => operation.name ?? []));
}

/**
 * The `persistedDocuments` collection: the trusted documents every instance serves by id. Written by
 * `npm run documents`, read by the service (ids every few seconds, a document when first asked for).
 * Documents are never changed in place: an id is the hash of its text, so publishing is idempotent.
 */
export function createPersistedDocumentStore(db: Db) {
  const documents: Collection<PersistedDocumentRecord> = db.collection(PERSISTED_DOCUMENTS_COLLECTION);

  /** Stores the documents not stored yet, one by one (a file holds tens, and a publish is rare). */
  async function publish(items: readonly PublishableDocument[], now: Date = new Date()): Promise<PublishOutcome> {
    const outcome: PublishOutcome = { published: [], alreadyPublished: [] };
    const stored = new Set(
      (
        await bounded((signal) =>
          documents.find({ _id: { $in: items.map((item) => item.id) } }, { projection: { _id: 1 }, signal }).toArray(),
        )
      ).map((record) => record._id),
    );
    for (const { id, document, operations } of items) {
      if (stored.has(id)) {
        outcome.alreadyPublished.push(id);
        continue;
      }
      try {
        const record = { _id: id, document, operations, publishedAt: now };
        await bounded((signal) => documents.insertOne(record, withSignal({}, signal)));
        outcome.published.push(id);
      } catch (error) {
        // Another publish of the same file got there first: the same text under the same id.
        if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
        outcome.alreadyPublished.push(id);
      }
      stored.add(id);
    }
    return outcome;
  }

  /** Every published document, oldest first. */
  async function list(): Promise<PersistedDocument[]> {
    const records = await bounded((signal) => documents.find({}, { signal }).toArray());
    return records
      .map(toDocument)
      .sort((a, b) => a.publishedAt.getTime() - b.publishedAt.getTime() || a.id.localeCompare(b.id));
  }

  /** False when no document has the id. */
  async function remove(id: string): Promise<boolean> {
    const { deletedCount } = await bounded((signal) => documents.deleteOne({ _id: id }, withSignal({}, signal)));
    return deletedCount > 0;
  }

  /** Every published id: what the service checks ids against without a read each. */
  async function ids(): Promise<string[]> {
    const records = await bounded((signal) => documents.find({}, { projection: { _id: 1 }, signal }).toArray());
    return records.map((record) => record._id);
  }

  /** The text of one document, null when it is not published. */
  async function find(id: string): Promise<string | null> {
    const record = await bounded((signal) => documents.findOne({ _id: id }, { projection: { document: 1 }, signal }));
    return record?.document ?? null;
  }

  return { publish, list, remove, ids, operationNames: () => operationNamesIn(documents), find };
}

export type PersistedDocumentStore = ReturnType<typeof createPersistedDocumentStore>;

/**
 * What the service reads: the ids, a document by id, and the operations' names when the ids change
 * (the benchmark keeps the first two in memory).
 */
export type PublishedDocumentSource = Pick<PersistedDocumentStore, 'ids' | 'find'> &
  Partial<Pick<PersistedDocumentStore, 'operationNames'>>;
