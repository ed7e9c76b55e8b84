// Side effects only: configuration -> database -> service -> listen -> drain on SIGTERM/SIGINT.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { type Config, loadConfig } from './config.ts';
import type { EmbeddedDatabase } from './db/embedded.ts';
import { connectDatabase, type Database } from './db/mongo.ts';
import { acceptUpgrades, drainHttpServer } from './http/server.ts';
import { listen } from './listen.ts';
import { createLogger } from './logger.ts';
import { createMetrics } from './metrics/metrics.ts';
import { createService, type Service } from './service.ts';
import { StartRefusedError, sayRefusal } from './start-refusal.ts';
import { isLoopbackAddress } from './static/loopback.ts';
import { createMongoStores, type Stores } from './stores.ts';
import { logTracingProblems } from './telemetry/diagnostics.ts';
import { runningTracing, TRACING_FLUSH_DEADLINE_MS, tracingRequested } from './telemetry/settings.ts';

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  // Every bad variable on the one line, so one restart fixes them all.
  sayRefusal(`invalid configuration: ${loaded.problems.join('; ')}`);
  process.exit(1);
}
const config = loaded.config;
// Started by `node --import=./dist/telemetry/register.js` (npm start) when OTEL_* says where spans go.
const tracing = runningTracing();
const logger = createLogger(config.LOG_LEVEL, 1, { traceContext: tracing !== undefined });
if (tracing) logTracingProblems(logger);
else if (tracingRequested(process.env)) {
  logger.warn(
    'an OTLP endpoint is set (OTEL_EXPORTER_OTLP_*ENDPOINT) but nothing is traced: start with npm start (node --import=./dist/telemetry/register.js)',
  );
}

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
  service?.drain();
  // Balancers learn of the stop from /ready (503 from now on): keep serving until they have, so no
  // connection they still send is refused. A terminal's Ctrl-C (SIGINT) has no balancer to wait for.
  const delayMs = reason === 'SIGTERM' && server?.listening ? config.SHUTDOWN_DELAY_MS : 0;
  logger.info({ reason, delayMs }, 'shutting down: /ready says 503; draining after the delay');
  if (delayMs > 0) await new Promise((waited) => setTimeout(waited, delayMs));
  // Scrapes hold no state worth waiting for; closing at once lets the drain have the port's attention.
  metricsServer?.close();
  metricsServer?.closeAllConnections();
  if (server?.listening) {
    // Streams are never idle, so they would hold the drain to its deadline: they end now, and
    // their clients resume on another instance with their last cursor. The drain waits for the
    // WebSockets, which close within a grace.
    void service?.endStreams();
    const { timedOut } = await drainHttpServer(server, config.SHUTDOWN_TIMEOUT_MS);
    if (timedOut) logger.warn({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'drain deadline passed: closed the rest');
  }
  const logFailure = (what: string) => (error: unknown) => logger.error({ err: error }, `${what} failed`);
  // After the drain: the service's GraphQL server, key sync and Redis client (REDIS_URL).
  await service?.close().catch(logFailure('closing the service'));
  // The drained requests' spans are queued by now: export them, but a Collector that is down or
  // frozen never holds the exit past the deadline.
  const flushed = await tracing?.stop(TRACING_FLUSH_DEADLINE_MS);
  if (flushed && flushed !== 'flushed') {
    logger.warn(
      { outcome: flushed, deadlineMs: TRACING_FLUSH_DEADLINE_MS },
      'tracing: the last spans were not all exported',
    );
  }
  await database?.close().catch(logFailure('closing the database client'));
  await embedded?.stop().catch(logFailure('stopping the embedded database'));
  logger.info({ reason, ms: Math.round(performance.now() - started), exitCode }, 'stopped');
  process.exit(exitCode);
}
process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
process.on('SIGINT', () => void shutdown('SIGINT', 0));

/**
 * A newcomer's `npm start` opens GraphiQL with a working key: one generated for this run, only where
 * nobody else can use it (a loopback listener, not production) and nothing else would authenticate.
 * Shown once in full: only this machine's users see this terminal, and curl needs it.
 */
async function withDevelopmentKey(stores: Stores): Promise<{ config: Config; developmentKey?: string }> {
  if (config.API_KEYS.length > 0 || config.NODE_ENV === 'production') return { config };
  if (!isLoopbackAddress(config.HOST)) {
    logger.info({ host: config.HOST }, 'no development key: HOST is not a loopback address');
    return { config };
  }
  // Whether any issued key could authenticate: read once, before the service's own key sync starts.
  const now = Date.now();
  const issued = await stores.issuedKeys
    .active()
    .then((keys) => keys.some((key) => key.expiresAt === null || key.expiresAt.getTime() > now))
    .catch((error: unknown) => {
      logger.warn({ err: error }, 'no development key: the issued API keys could not be read');
      return true;
    });
  if (issued) return { config };
  const key = `dev_${randomBytes(24).toString('base64url')}`;
  logger.warn({ apiKey: key }, 'no API_KEYS and no issued key: generated a development key for this run');
  return { config: { ...config, API_KEYS: [key] }, developmentKey: key };
}

/** MONGODB_URI, or the embedded FerretDB over DATA_DIR when it is unset. */
async function databaseUri(): Promise<string> {
  if (config.MONGODB_URI) return config.MONGODB_URI;
  const started = Date.now();
  // Loaded only here: a deployment that sets MONGODB_URI never runs the embedded server's code.
  const { startEmbeddedDatabase } = await import('./db/embedded.ts');
  embedded = await startEmbeddedDatabase({
    dataDir: config.DATA_DIR,
    log: (message) => logger.info(message),
    warn: (message) => logger.warn(message),
  });
  embedded.onUnexpectedExit((code) => {
    logger.fatal({ code }, 'the embedded database stopped; exiting so a supervisor can restart us');
    void shutdown('embedded database died', 1);
  });
  logger.info({ dataDir: config.DATA_DIR, ms: Date.now() - started }, 'embedded database started');
  return embedded.uri;
}

const serverOptions = {
  keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
  onError: (error: Error, where: string) => {
    logger.fatal({ err: error }, `the server on ${where} failed`);
    void shutdown('server failed', 1);
  },
};

async function start(): Promise<void> {
  database = await connectDatabase(await databaseUri(), config.MONGODB_DB);
  const metrics = createMetrics();
  const stores = await createMongoStores(database, { metrics, logger });
  if (embedded) {
    const { warnWhenEmbeddedStoreIsLarge } = await import('./db/store-size-warning.ts');
    warnWhenEmbeddedStoreIsLarge(database.db, logger);
  }
  const { config: settings, developmentKey } = await withDevelopmentKey(stores);
  service = createService({ config: settings, stores, logger, metrics, developmentKey, tracer: tracing?.tracer });
  await service.ready;
  // A failed first read was logged by the key sync; this then also says nothing can authenticate yet.
  if (!service.hasUsableKey()) {
    logger.warn('no API key can authenticate: set API_KEYS, or issue one with `npm run keys -- create NAME`');
  }
  if (config.METRICS_PORT !== undefined) {
    const metricsPort = await listen(service.metricsListener, serverOptions, {
      host: config.METRICS_HOST ?? config.HOST,
      port: config.METRICS_PORT,
      variables: { host: config.METRICS_HOST ? 'METRICS_HOST' : 'HOST', port: 'METRICS_PORT' },
    });
    metricsServer = metricsPort.http;
    logger.info({ metrics: `${metricsPort.origin}/metrics` }, 'metrics are served');
  }
  const api = await listen(service.listener, serverOptions, {
    host: config.HOST,
    port: config.PORT,
    variables: { host: 'HOST', port: 'PORT' },
  });
  server = api.http;
  // GraphQL over WebSocket on /graphql.
  acceptUpgrades(server, service.upgrade);
  const { origin } = api;
  const rest = `${origin}${config.REST_BASE_PATH}`;
  // With REDIS_URL, whether Redis answered yet is logged on its own line: listening never waits for it.
  const rateLimits = config.REDIS_URL ? 'redis' : 'memory';
  logger.info(
    { graphiql: `${origin}/graphql`, rest, docs: `${rest}/docs`, rateLimits, tracing: tracing?.destination ?? 'off' },
    'petstore-gateway is listening',
  );
}

start().catch((error: unknown) => {
  if (error instanceof StartRefusedError) {
    sayRefusal(error.message);
    void shutdown('start refused', 1);
    return;
  }
  logger.fatal({ err: error }, error instanceof Error ? error.message : 'start failed');
  void shutdown('start failed', 1);
});
