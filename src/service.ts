import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import type { ApiKeyStore } from './auth/api-key-store.ts';
import { createKeyRing } from './auth/api-keys.ts';
import { type IssuedKeysSync, syncIssuedKeys } from './auth/issued-keys-sync.ts';
import {
  DEFAULT_AUTH_FAILURE_BURST,
  DEFAULT_AUTH_FAILURE_LIMIT,
  DEFAULT_MAX_GRAPHQL_BODY_BYTES,
  DEFAULT_MAX_GRAPHQL_LIST_ITEMS,
  DEFAULT_RATE_LIMIT_BURST,
  DEFAULT_RATE_LIMIT_PER_KEY,
} from './config.ts';
import { createContextFactory } from './context.ts';
import { createEdge } from './edge/edge.ts';
import type { LimiterStore } from './edge/limiter-store.ts';
import { createRateLimits, type RateLimitSettings } from './edge/rate-limits.ts';
import { schema } from './graphql/schema/index.ts';
import type { IdempotencyStore } from './idempotency/idempotency-store.ts';
import { createIdempotentCreates, DEFAULT_IDEMPOTENCY_RETENTION_HOURS } from './idempotency/idempotent-create.ts';
import { schedulePurge } from './idempotency/purge-schedule.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';
import { createMetricsHandler, createMetricsListener } from './metrics/metrics-endpoint.ts';
import type { PetRepository } from './pets/pet-repository.ts';
import { createRestExecutor } from './rest/executor.ts';
import { createOpenApiDocumentHandler, loadOpenApiDocument } from './rest/openapi-document.ts';
import { createPublicPages } from './static/public-pages.ts';
import { createGraphQLServer, GRAPHQL_ENDPOINT } from './yoga.ts';

export interface ServiceOptions {
  pets: PetRepository;
  /** Keys from API_KEYS: accepted beside the issued ones (bootstrap and emergency access). */
  apiKeys: readonly string[];
  /** The `apiKeys` collection, read every 2 s so keys issued or revoked take effect without a restart. */
  issuedKeys?: ApiKeyStore;
  /**
   * The `idempotencyKeys` collection. Every service over a database has it; only the benchmark's
   * in-memory targets leave it out, and then an Idempotency-Key changes nothing.
   */
  idempotencyRecords?: IdempotencyStore;
  /** How long an Idempotency-Key is remembered (24 h by default). */
  idempotencyRetentionHours?: number;
  /** Where the metrics are counted; a fresh set by default. */
  metrics?: Metrics;
  /** False when /metrics is served on its own port (METRICS_PORT), so not on this one. */
  metricsOnMainPort?: boolean;
  /** Its connection pool is shown in the metrics. */
  databaseClient?: MongoClient;
  logger: Logger;
  restBasePath: string;
  /** Largest REST request body. */
  maxBodyBytes: number;
  /** Largest GraphQL request body. */
  maxGraphQLBodyBytes?: number;
  /** Most pets one GraphQL operation may ask for, summed over its list fields. */
  maxGraphQLListItems?: number;
  /** Per API key and per client address for failed authentication; a rate of 0 turns one off. */
  rateLimits?: RateLimitSettings;
  /** Where the rate limit counters live (this process's memory by default). */
  rateLimitStore?: LimiterStore;
  /** Resolves when the database answers; backs `GET /ready`. */
  checkDatabase: () => Promise<void>;
  /** Pre-filled in GraphiQL's Headers tab: only for a generated development key on loopback. */
  graphiqlApiKey?: string;
}

export interface Service {
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** GET /metrics without authentication, for a listener on a private port (METRICS_PORT). */
  metricsListener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Settles once the issued keys were read for the first time: listen after it. */
  ready: Promise<void>;
  /** Whether any key, configured or issued, would authenticate now (as far as the last read knows). */
  hasUsableKey(): boolean;
  /** From now on /ready says 503 and every response closes its connection. */
  drain(): void;
  close(): Promise<void>;
}

const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  perKey: { rate: DEFAULT_RATE_LIMIT_PER_KEY, burst: DEFAULT_RATE_LIMIT_BURST },
  authFailures: { rate: DEFAULT_AUTH_FAILURE_LIMIT, burst: DEFAULT_AUTH_FAILURE_BURST },
};

/** The composition root: builds the whole HTTP service once; main, the tests and the benchmark call it. */
export function createService(options: ServiceOptions): Service {
  const { logger, restBasePath } = options;
  const maxGraphQLBodyBytes = options.maxGraphQLBodyBytes ?? DEFAULT_MAX_GRAPHQL_BODY_BYTES;
  const metrics = options.metrics ?? createMetrics();
  if (options.databaseClient) metrics.watchConnectionPool(options.databaseClient);
  const retentionHours = options.idempotencyRetentionHours ?? DEFAULT_IDEMPOTENCY_RETENTION_HOURS;
  const idempotentCreates = options.idempotencyRecords
    ? createIdempotentCreates({
        pets: options.pets,
        records: options.idempotencyRecords,
        retentionMs: retentionHours * 3_600_000,
        onReplay: metrics.countIdempotentReplay,
      })
    : undefined;
  const stopPurging = idempotentCreates ? schedulePurge(idempotentCreates, logger) : () => {};
  const createContext = createContextFactory(options.pets, idempotentCreates);
  const yoga = createGraphQLServer({
    createContext,
    logger,
    maxListItems: options.maxGraphQLListItems ?? DEFAULT_MAX_GRAPHQL_LIST_ITEMS,
    metrics,
  });
  const rest = createRestExecutor({
    schema,
    envelop: yoga,
    basePath: restBasePath,
    maxBodyBytes: options.maxBodyBytes,
    logger,
    metrics,
  });
  const pages = createPublicPages({
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    restBasePath,
    graphiqlApiKey: options.graphiqlApiKey,
    openApiDocument: createOpenApiDocumentHandler(loadOpenApiDocument(), restBasePath),
  });
  const keyRing = createKeyRing(options.apiKeys);
  const keySync: IssuedKeysSync | undefined = options.issuedKeys
    ? syncIssuedKeys({ ring: keyRing, store: options.issuedKeys, logger, onDatabaseError: metrics.countDatabaseError })
    : undefined;
  const sendMetrics = createMetricsHandler(metrics, logger);
  const edge = createEdge({
    logger,
    verifyApiKey: keyRing.verify,
    metrics,
    metricsRoute: options.metricsOnMainPort ?? true,
    sendMetrics,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    graphql: (req, res, identity) => yoga.handle(req, res, identity),
    rest,
    restBasePath,
    pages,
    checkDatabase: options.checkDatabase,
    maxGraphQLBodyBytes,
    rateLimits: createRateLimits({
      ...(options.rateLimits ?? DEFAULT_RATE_LIMITS),
      logger,
      ...(options.rateLimitStore ? { store: options.rateLimitStore } : {}),
    }),
  });
  return {
    listener: edge.listener,
    metricsListener: createMetricsListener(sendMetrics),
    ready: keySync?.firstRead ?? Promise.resolve(),
    hasUsableKey: keyRing.hasUsableKey,
    drain: edge.drain,
    close: async () => {
      edge.drain();
      stopPurging();
      await keySync?.stop();
      await yoga.dispose();
    },
  };
}
