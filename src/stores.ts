import type { Logger } from 'pino';
import { createApiKeyStore, ensureApiKeyIndexes } from './auth/api-key-store.ts';
import type { IssuedKeySource } from './auth/api-keys.ts';
import { type Database, followConnectionPool } from './db/mongo.ts';
import { createPersistedDocumentStore, type PublishedDocumentSource } from './documents/published-documents.ts';
import {
  createIdempotencyStore,
  ensureIdempotencyIndexes,
  type IdempotencyStore,
} from './idempotency/idempotency-store.ts';
import type { Metrics } from './metrics/metrics.ts';
import {
  createMongoPetRepository,
  ensurePetIndexes,
  type MongoPetRepository,
  type PetRepository,
  type PetRepositoryOptions,
} from './pets/pet-repository.ts';
import { createWebhookStore, ensureWebhookIndexes, type WebhookStore } from './webhooks/webhook-store.ts';

/** Everything the service keeps: one interface, met by MongoDB here and by memory in the benchmark. */
export interface Stores {
  pets: PetRepository;
  idempotencyRecords: IdempotencyStore;
  /** The issued API keys the service accepts beside API_KEYS, and where their last use is written. */
  issuedKeys: IssuedKeySource;
  /** The trusted documents clients may send by id (`npm run documents -- publish`). */
  persistedDocuments: PublishedDocumentSource;
  /** Webhook endpoints and their delivery log; absent (no webhooks) in the benchmark's memory stores. */
  webhooks?: WebhookStore;
  /** Resolves when the store answers (GET /ready); honours the signal. */
  ping(signal: AbortSignal): Promise<void>;
}

/** The pet repository over `database`: on FerretDB, whose findAndModify is not atomic, ids are allocated one at a time. */
export function createPetRepository(
  database: Database,
  options: Omit<PetRepositoryOptions, 'serializeIdAllocation'> = {},
): MongoPetRepository {
  return createMongoPetRepository(database.db, { ...options, serializeIdAllocation: database.isFerretDb });
}

/**
 * The stores over one MongoDB-compatible database: indexes created, FerretDB detected once, outages
 * counted in metrics.
 */
export async function createMongoStores(
  database: Database,
  { metrics, logger }: { metrics: Metrics; logger: Logger },
): Promise<Stores> {
  const { db } = database;
  await Promise.all([
    ensurePetIndexes(db),
    ensureApiKeyIndexes(db),
    ensureIdempotencyIndexes(db),
    ensureWebhookIndexes(db),
  ]);
  followConnectionPool(database.client, metrics.setPoolConnections);
  const onDatabaseUnavailable = metrics.countDatabaseError;
  return {
    pets: createPetRepository(database, {
      onCorruptDocument: (petId, problem) =>
        logger.warn({ petId, problem }, 'skipping a stored pet this service cannot read'),
      onDatabaseUnavailable,
    }),
    idempotencyRecords: createIdempotencyStore(db, { onDatabaseUnavailable }),
    issuedKeys: createApiKeyStore(db),
    persistedDocuments: createPersistedDocumentStore(db),
    webhooks: createWebhookStore(db),
    ping: database.ping,
  };
}
