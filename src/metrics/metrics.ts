import type { MongoClient } from 'mongodb';
import { collectDefaultMetrics, type Gauge, Registry } from 'prom-client';
import type { StreamEnd, StreamRefusal } from '../http/stream-outcomes.ts';
import type { UpgradeRefusalReason } from '../subscriptions/websocket-close.ts';
import { defineMetrics } from './metric-definitions.ts';
import { createOperationLabels } from './operation-labels.ts';

/** Document ids are published by operators, so fewer can come; past this many, new ones count as "other". */
const MAX_DOCUMENT_IDS = 1_000;

/** Label values from a set that clients or operators choose: the first `max` as they are, then "other". */
function boundedLabel(max: number, maxLength = Number.POSITIVE_INFINITY) {
  const seen = new Set<string>();
  return (value: string): string => {
    if (seen.has(value)) return value;
    if (seen.size >= max || value.length > maxLength) return 'other';
    seen.add(value);
    return value;
  };
}

let processRegistry: Registry | undefined;

/**
 * Node's process metrics (CPU, memory, event loop lag, GC, handles), registered once per process:
 * each registration starts its own event-loop and GC observers, and every service in a process
 * (tests start many) reports the same process.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

type PoolEvent = { address: string; connectionId: number | '<monitor>' };

/**
 * Follows the driver's connection pool events (CMAP), which every MongoClient emits. Connections are
 * tracked by id, so those made before this was called count from their first use on.
 */
function followConnectionPool(client: MongoClient, openGauge: Gauge, inUseGauge: Gauge): void {
  const open = new Set<string>();
  const inUse = new Set<string>();
  const idOf = (event: PoolEvent) => `${event.address}/${event.connectionId}`;
  const on = (
    name: 'connectionCreated' | 'connectionCheckedOut' | 'connectionCheckedIn' | 'connectionClosed',
    change: (id: string) => void,
  ) =>
    client.on(name, (event: PoolEvent) => {
      change(idOf(event));
      openGauge.set(open.size);
      inUseGauge.set(inUse.size);
    });
  on('connectionCreated', (id) => open.add(id));
  on('connectionCheckedOut', (id) => {
    open.add(id);
    inUse.add(id);
  });
  on('connectionCheckedIn', (id) => inUse.delete(id));
  on('connectionClosed', (id) => {
    open.delete(id);
    inUse.delete(id);
  });
}

/** Why a GraphQL request was refused under TRUSTED_DOCUMENTS (graphql_documents_refused_total). */
export type DocumentRefusal = 'id_required' | 'not_in_list' | 'document_and_id';

export type Outcome = 'success' | 'error';

/**
 * The service's Prometheus metrics (prom-client). Labels are route templates, operation names and
 * key ids: never raw paths or keys, so their number stays bounded whatever clients send.
 */
export function createMetrics() {
  const registry = new Registry();
  const { httpDuration, graphqlOperations, deprecatedUses, rateLimited, authFailures, databaseErrors, ...rest } =
    defineMetrics(registry);
  // Operation names are chosen by clients, but those of published documents always get their label.
  const operationLabels = createOperationLabels();
  const documentLabel = boundedLabel(MAX_DOCUMENT_IDS);

  return {
    /** The text a Prometheus scrape gets: this service's metrics and the process's. */
    scrape: (() => {
      const merged = Registry.merge([registry, processMetrics()]);
      return { contentType: merged.contentType, text: () => merged.metrics() };
    })(),

    observeRequest(route: string, method: string, status: number, seconds: number): void {
      httpDuration.observe({ route, method, status: String(status) }, seconds);
    },

    /** `documentId`: the published document the operation ran by, '' for one sent whole. */
    countGraphQLOperation(name: string | undefined, type: string, outcome: Outcome, documentId = ''): void {
      const document = documentId === '' ? '' : documentLabel(documentId);
      graphqlOperations.inc({ operation: operationLabels.label(name ?? 'anonymous'), type, outcome, document });
    },
    countFastPathRequest: () => rest.fastPathRequests.inc(),
    countUntrustedOperation(name: string | undefined, type: string): void {
      rest.untrustedOperations.inc({ operation: operationLabels.label(name ?? 'anonymous'), type });
    },
    /** The published documents' operation names, as last read: each always gets its own label. */
    publishOperationNames: operationLabels.publish,
    countDocumentRefused: (reason: DocumentRefusal) => rest.documentsRefused.inc({ reason }),

    setOpenStreams: (count: number) => rest.streamsOpen.set(count),
    countStreamEvent: () => rest.streamEvents.inc(),
    countStreamRefused: (reason: StreamRefusal) => rest.streamsRefused.inc({ reason }),
    countStreamEnded: (reason: StreamEnd) => rest.streamsEnded.inc({ reason }),
    countUpgradeRefused: (reason: UpgradeRefusalReason) => rest.websocketUpgradesRefused.inc({ reason }),

    countDeprecatedUse: (operation: string, keyId: string) => deprecatedUses.inc({ operation, key_id: keyId }),
    countRateLimited: (limit: 'per_key' | 'auth_failures') => rateLimited.inc({ limit }),
    countAuthFailure: (reason: 'missing' | 'invalid') => authFailures.inc({ reason }),
    countDatabaseError: (operation: string) => databaseErrors.inc({ operation }),
    countIdempotentReplay: () => rest.idempotentReplays.inc(),
    /** 1 while the rate limits count in Redis for the whole fleet, 0 while this instance counts alone. */
    setRateLimitStoreShared: (shared: boolean) => rest.rateLimitStoreShared.set(shared ? 1 : 0),
    countRateLimitStoreFallback: () => rest.rateLimitStoreFallbacks.inc(),
    /** Shows the driver's connection pool (its CMAP events) in the pool gauges. */
    watchConnectionPool: (client: MongoClient) => followConnectionPool(client, rest.poolOpen, rest.poolInUse),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
