import type { Logger } from 'pino';
import { startRefreshLoop } from '../db/refresh-loop.ts';
import type { PublishedDocumentSource } from './persisted-document-store.ts';

/** A document published or removed reaches every instance within this (plus one read of the ids). */
export const PUBLISHED_DOCUMENTS_REFRESH_MS = 2_000;
/** Texts kept per instance; past this the first read goes (and is read again when asked for). */
const MAX_CACHED_TEXTS = 1_000;

export interface PublishedDocuments {
  /**
   * The text of a published document; null when the id was not published as of the last read of the
   * ids, answered without a database read (so random ids cost nothing), or when it was removed since.
   * A known id's text is read once per instance, then kept.
   */
  lookup(id: string): string | null | Promise<string | null>;
  /** Whether the id was published, as of the last read. */
  has(id: string): boolean;
  /** Settles after the first read of the ids: the service may listen then. */
  firstRead: Promise<void>;
  stop(): void;
}

export interface PublishedDocumentsOptions {
  store: PublishedDocumentSource;
  logger: Logger;
  onDatabaseError?: (operation: string) => void;
  /** The published operations' names, read again whenever the ids change. */
  onOperationNames?: (names: ReadonlySet<string>) => void;
  refreshMs?: number;
}

/**
 * The published ids as read now; when they differ from `known`, the published operations' names are
 * read and told first (metric labels), so that should that read fail, the next refresh tries again.
 */
async function readIds(
  store: PublishedDocumentSource,
  known: ReadonlySet<string>,
  onOperationNames?: (names: ReadonlySet<string>) => void,
): Promise<Set<string>> {
  const ids = new Set(await store.ids());
  const changed = ids.size !== known.size || [...ids].some((id) => !known.has(id));
  if (changed && store.operationNames && onOperationNames) onOperationNames(new Set(await store.operationNames()));
  return ids;
}

/**
 * The trusted documents as this instance knows them: every published id, read every
 * PUBLISHED_DOCUMENTS_REFRESH_MS (the negative cache: an id not among them is refused without a
 * read), and the texts asked for, cached. An id is the hash of its text, so a cached text never goes
 * stale; only its membership can change, and that is checked on every lookup.
 */
export function createPublishedDocuments(options: PublishedDocumentsOptions): PublishedDocuments {
  const { store } = options;
  let published = new Set<string>();
  const texts = new Map<string, string>();
  const reading = new Map<string, Promise<string | null>>();

  const reads = startRefreshLoop({
    refresh: async () => {
      published = await readIds(store, published, options.onOperationNames);
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
    lookup(id) {
      // Texts of ids no longer published leave the cache at each read of the ids, so a cached one is published.
      // No reordering per hit (a least-recently-used order cost more per request than it could save):
      // past MAX_CACHED_TEXTS, the first read goes.
      const text = texts.get(id);
      if (text !== undefined) return text;
      return published.has(id) ? read(id) : null;
    },
    has: (id) => published.has(id),
    firstRead: reads.firstRead,
    stop: reads.stop,
  };
}
