import type { Collection, Db } from 'mongodb';
import type { Logger } from 'pino';
import { DATABASE_DEADLINE_MS, withDeadline, withSignal } from '../db/deadline.ts';
import { isDuplicateKey } from '../db/driver-errors.ts';
import { startRefreshLoop } from '../db/refresh-loop.ts';

// The trusted documents: the persistedDocuments collection, and each instance's view of what is published.

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

/** As stored: the id (`sha256:<hex>` of `document`) is the record's `_id`. */
type PersistedDocumentRecord = Omit<PersistedDocument, 'id'> & { _id: string };

export interface PublishOutcome {
  /** Ids stored by this call. */
  published: string[];
  /** Ids that were stored already (by an earlier publish, or another one at the same time). */
  alreadyPublished: string[];
}

const bounded = <T>(work: (signal: AbortSignal) => Promise<T>) => withDeadline(DATABASE_DEADLINE_MS, work);

/** The `persistedDocuments` collection (`npm run documents`); ids are text hashes, so publishing is idempotent. */
export function createPersistedDocumentStore(db: Db) {
  const documents: Collection<PersistedDocumentRecord> = db.collection(PERSISTED_DOCUMENTS_COLLECTION);

  /** Stores the documents not stored yet, one by one (a file holds tens, and a publish is rare). */
  async function publish(items: readonly PublishableDocument[], now: Date = new Date()): Promise<PublishOutcome> {
    const outcome: PublishOutcome = { published: [], alreadyPublished: [] };
    for (const { id, document, operations } of items) {
      try {
        const record = { _id: id, document, operations, publishedAt: now };
        await bounded((signal) => documents.insertOne(record, withSignal({}, signal)));
        outcome.published.push(id);
      } catch (error) {
        // Stored already (by an earlier publish, or another at the same time): the same text under the same id.
        if (!isDuplicateKey(error)) throw error;
        outcome.alreadyPublished.push(id);
      }
    }
    return outcome;
  }

  /** Every published document, oldest first. */
  async function list(): Promise<PersistedDocument[]> {
    const records = await bounded((signal) => documents.find({}, { signal }).toArray());
    return records
      .map(({ _id, document, operations, publishedAt }) => ({ id: _id, operations, publishedAt, document }))
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

  /** The names of every published operation: each has its own metric label (operation-labels.ts). */
  async function operationNames(): Promise<string[]> {
    const projection = { _id: 0, operations: 1 };
    const records = await bounded((signal) => documents.find({}, { projection, signal }).toArray());
    return records.flatMap((record) => record.operations.flatMap((operation) => operation.name ?? []));
  }

  return { publish, list, remove, ids, operationNames, find };
}

export type PersistedDocumentStore = ReturnType<typeof createPersistedDocumentStore>;

/** What the service reads: the ids, a document by id, the operations' names (the benchmark keeps them in memory). */
export type PublishedDocumentSource = Pick<PersistedDocumentStore, 'ids' | 'find'> &
  Partial<Pick<PersistedDocumentStore, 'operationNames'>>;

/** A document published or removed reaches every instance within this (plus one read of the ids). */
export const PUBLISHED_DOCUMENTS_REFRESH_MS = 2_000;
/** Texts kept per instance; past this the first read goes (and is read again when asked for). */
const MAX_CACHED_TEXTS = 1_000;

export interface PublishedDocumentsOptions {
  store: PublishedDocumentSource;
  logger: Logger;
  onDatabaseError?: (operation: string) => void;
  /** The published operations' names, read again whenever the ids change. */
  onOperationNames?: (names: ReadonlySet<string>) => void;
  refreshMs?: number;
}

/**
 * The published ids as this instance knows them (read every PUBLISHED_DOCUMENTS_REFRESH_MS: others
 * are refused without a read), and the texts asked for, cached: an id is its text's hash, so never stale.
 */
export function createPublishedDocuments(options: PublishedDocumentsOptions) {
  const { store } = options;
  let published = new Set<string>();
  const texts = new Map<string, string>();
  const reading = new Map<string, Promise<string | null>>();

  const reads = startRefreshLoop({
    refresh: async () => {
      const ids = new Set(await store.ids());
      // Names first (metric labels): should their read fail, the ids stay unchanged and the next refresh tries again.
      const changed = ids.size !== published.size || [...ids].some((id) => !published.has(id));
      if (changed && store.operationNames && options.onOperationNames) {
        options.onOperationNames(new Set(await store.operationNames()));
      }
      published = ids;
      for (const id of texts.keys()) if (!published.has(id)) texts.delete(id);
    },
    intervalMs: options.refreshMs ?? PUBLISHED_DOCUMENTS_REFRESH_MS,
    logger: options.logger,
    what: 'the published documents',
    onFailure: () => options.onDatabaseError?.('persistedDocuments.ids'),
  });

  function keep(id: string, text: string): void {
    if (texts.size >= MAX_CACHED_TEXTS) texts.delete(texts.keys().next().value as string);
    texts.set(id, text);
  }

  /** One read per id however many requests ask for it at once. */
  function read(id: string): Promise<string | null> {
    let pending = reading.get(id);
    if (pending) return pending;
    pending = store
      .find(id)
      .then((text) => {
        if (text !== null && published.has(id)) keep(id, text);
        return text;
      })
      .catch((error: unknown) => {
        options.onDatabaseError?.('persistedDocuments.find');
        throw error;
      })
      .finally(() => reading.delete(id));
    reading.set(id, pending);
    return pending;
  }

  return {
    /**
     * The text of a published document; null, without a read (so random ids cost nothing), when the id
     * was not published as of the last read of the ids. A known id's text is read once, then kept.
     */
    lookup(id: string): string | null | Promise<string | null> {
      // Texts of ids no longer published leave the cache at each read of the ids, so a cached one is published.
      // No reordering per hit (a least-recently-used order cost more per request than it could save):
      // past MAX_CACHED_TEXTS, the first read goes.
      const text = texts.get(id);
      if (text !== undefined) return text;
      return published.has(id) ? read(id) : null;
    },
    /** Whether the id was published, as of the last read. */
    has: (id: string) => published.has(id),
    /** Settles after the first read of the ids: the service may listen then. */
    firstRead: reads.firstRead,
    stop: reads.stop,
  };
}

export type PublishedDocuments = ReturnType<typeof createPublishedDocuments>;
