// Side effects only: configuration, database, HTTP listener, drain on SIGTERM/SIGINT.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { createApiKeyStore, ensureApiKeyIndexes } from './auth/api-key-store.ts';
import { loadConfig, rateLimitsOf } from './config.ts';
import { type EmbeddedDatabase, startEmbeddedDatabase } from './db/embedded.ts';
import { connectDatabase, type Database } from './db/mongo.ts';
import { warnWhenEmbeddedStoreIsLarge } from './db/store-size-warning.ts';
import { createHttpServer, drainHttpServer } from './http/server.ts';
import { createIdempotencyStore, ensureIdempotencyIndexes } from './idempotency/idempotency-store.ts';
import { createLogger } from './logger.ts';
import { createMetrics } from './metrics/metrics.ts';
import { createMongoPetRepository, ensurePetIndexes } from './pets/pet-repository.ts';
import { createService, type Service } from './service.ts';

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  console.error(`Invalid configuration:\n${loaded.problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exit(1);
}
const config = loaded.config;
const logger = createLogger(config.LOG_LEVEL);

let embedded: EmbeddedDatabase | undefined;
let database: Database | undefined;
let service: Service | undefined;
let server: Server | undefined;
let metricsServer: Server | undefined;
let stopping = false;

/** Stops in reverse order of start; each step runs even when an earlier one failed. */
async function shutdown(reason: string, exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  const started = performance.now();
  logger.info({ reason }, 'shutting down: draining requests');
  service?.drain();
  // Scrapes hold no state worth waiting for; closing at once lets the drain have the port's attention.
  metricsServer?.close();
  metricsServer?.closeAllConnections();
  if (server?.listening) {
    const { timedOut } = await drainHttpServer(server, config.SHUTDOWN_TIMEOUT_MS);
    if (timedOut)
      logger.warn({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'drain deadline passed: closed the remaining connections');
  }
  await service?.close().catch((error: unknown) => logger.error({ err: error }, 'closing the GraphQL server failed'));
  await database?.close().catch((error: unknown) => logger.error({ err: error }, 'closing the database client failed'));
  await embedded
    ?.stop()
    .catch((error: unknown) => logger.error({ err: error }, 'stopping the embedded database failed'));
  logger.info({ reason, ms: Math.round(performance.now() - started), exitCode }, 'stopped');
  process.exit(exitCode);
}
process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
process.on('SIGINT', () => void shutdown('SIGINT', 0));

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost';
}

async function start(): Promise<void> {
  let apiKeys = config.API_KEYS;
  let graphiqlApiKey: string | undefined;
  if (apiKeys.length === 0 && config.NODE_ENV !== 'production') {
    // Development only (production takes its keys from API_KEYS or `npm run keys`): one for this run, shown once.
    apiKeys = [`dev_${randomBytes(24).toString('base64url')}`];
    logger.warn({ apiKey: apiKeys[0] }, 'API_KEYS is not set: generated a development key for this run');
    // Only this machine can load the page, so GraphiQL may open with the key already in its Headers.
    if (isLoopback(config.HOST)) graphiqlApiKey = apiKeys[0];
  }

  let uri = config.MONGODB_URI;
  if (!uri) {
    const started = Date.now();
    embedded = await startEmbeddedDatabase({ dataDir: config.DATA_DIR, log: (message) => logger.info(message) });
    embedded.onUnexpectedExit((code) => {
      logger.fatal({ code }, 'the embedded database stopped; exiting so a supervisor can restart us');
      void shutdown('embedded database died', 1);
    });
    uri = embedded.uri;
    logger.info(
      { kind: embedded.kind, dataDir: config.DATA_DIR, ms: Date.now() - started },
      'embedded database started',
    );
  }

  database = await connectDatabase(uri, config.MONGODB_DB);
  const { db } = database;
  await Promise.all([ensurePetIndexes(db), ensureApiKeyIndexes(db), ensureIdempotencyIndexes(db)]);
  if (embedded?.kind === 'ferretdb') warnWhenEmbeddedStoreIsLarge(db, logger);
  const metrics = createMetrics();
  service = createService({
    pets: createMongoPetRepository(db, {
      serializeIdAllocation: database.isFerretDb,
      onCorruptDocument: (petId, problem) =>
        logger.warn({ petId, problem }, 'skipping a stored pet this service cannot read'),
      onDatabaseUnavailable: metrics.countDatabaseError,
    }),
    apiKeys,
    issuedKeys: createApiKeyStore(db),
    idempotencyRecords: createIdempotencyStore(db, { onDatabaseUnavailable: metrics.countDatabaseError }),
    idempotencyRetentionHours: config.IDEMPOTENCY_RETENTION_HOURS,
    metrics,
    metricsOnMainPort: config.METRICS_PORT === undefined,
    databaseClient: database.client,
    logger,
    restBasePath: config.REST_BASE_PATH,
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxGraphQLBodyBytes: config.MAX_GRAPHQL_BODY_BYTES,
    maxGraphQLListItems: config.MAX_GRAPHQL_LIST_ITEMS,
    rateLimits: rateLimitsOf(config),
    checkDatabase: database.ping,
    graphiqlApiKey,
  });

  await service.ready;
  // A failed first read was logged by the key sync; this then also says nothing can authenticate yet.
  if (!service.hasUsableKey()) {
    logger.warn('no API key can authenticate: set API_KEYS, or issue one with `npm run keys -- create NAME`');
  }
  if (config.METRICS_PORT !== undefined) listenForMetrics(service, config.METRICS_PORT);

  const http = createHttpServer(service.listener);
  server = http;
  http.on('error', (error) => {
    logger.fatal({ err: error }, `cannot listen on ${config.HOST}:${config.PORT}`);
    void shutdown('listen failed', 1);
  });
  http.listen(config.PORT, config.HOST, () => {
    const address = http.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    const origin = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
    logger.info(
      {
        graphiql: `${origin}/graphql`,
        rest: `${origin}${config.REST_BASE_PATH}`,
        docs: `${origin}${config.REST_BASE_PATH}/docs`,
      },
      'petstore-gateway is listening',
    );
  });
}

/** /metrics without a key on its own port: for a network only Prometheus can reach. */
function listenForMetrics(running: Service, port: number): void {
  const host = config.METRICS_HOST ?? config.HOST;
  const http = createHttpServer(running.metricsListener);
  metricsServer = http;
  http.on('error', (error) => {
    logger.fatal({ err: error }, `cannot listen for metrics on ${host}:${port}`);
    void shutdown('listen failed', 1);
  });
  http.listen(port, host, () => {
    const address = http.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    logger.info(
      { metrics: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics` },
      'metrics are served',
    );
  });
}

start().catch((error: unknown) => {
  logger.fatal({ err: error }, error instanceof Error ? error.message : 'start failed');
  void shutdown('start failed', 1);
});
