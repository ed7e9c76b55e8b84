// Side effects only: configuration, database, HTTP listener, shutdown.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { pino } from 'pino';
import { pinoHttp } from 'pino-http';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './db/embedded.ts';
import { connectDatabase, type Database } from './db/mongo.ts';
import { createMongoPetRepository, ensurePetIndexes } from './pets/pet-repository.ts';
import { loadOpenApiDocument } from './rest/openapi-document.ts';

const SHUTDOWN_GRACE_MS = 10_000;

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  console.error(`Invalid configuration:\n${loaded.problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exit(1);
}
const config = loaded.config;
const logger = pino({ level: config.LOG_LEVEL, base: { service: 'petstore-gateway' } });

let embedded: EmbeddedDatabase | undefined;
let database: Database | undefined;
let server: ReturnType<typeof createServer> | undefined;
let stopping = false;

/** Stops in reverse order of start; each step runs even when an earlier one failed. */
async function shutdown(reason: string, exitCode: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    logger.info({ reason }, 'shutting down');
    if (server) {
      const closed = new Promise<void>((done) => server!.close(() => done()));
      // Idle keep-alive sockets close at once; a stuck request gets a grace period, then is cut.
      server.closeIdleConnections();
      const timer = setTimeout(() => server!.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(timer);
    }
    await database?.close().catch((error: unknown) => logger.error({ err: error }, 'closing the database client failed'));
    await embedded?.stop().catch((error: unknown) => logger.error({ err: error }, 'stopping the embedded database failed'));
  }
  process.exit(exitCode);
}
process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
process.on('SIGINT', () => void shutdown('SIGINT', 0));

async function start(): Promise<void> {
  let apiKeys = config.API_KEYS;
  if (apiKeys.length === 0) {
    // Development only (production refuses to start without keys): one key for this run, shown once.
    apiKeys = [`dev_${randomBytes(24).toString('base64url')}`];
    logger.warn({ apiKey: apiKeys[0] }, 'API_KEYS is not set: generated a development key for this run');
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
    logger.info({ kind: embedded.kind, dataDir: config.DATA_DIR, ms: Date.now() - started }, 'embedded database started');
  }

  database = await connectDatabase(uri, config.MONGODB_DB);
  await ensurePetIndexes(database.db);
  const yoga = createApp({
    pets: createMongoPetRepository(database.db, { serializeIdAllocation: database.isFerretDb }),
    apiKeys,
    logger,
    restBasePath: config.REST_BASE_PATH,
    maxBodyBytes: config.MAX_BODY_BYTES,
    openApiDocument: loadOpenApiDocument(),
    checkDatabase: database.ping,
  });

  // One access-log line per request (probes excluded), with an id the client also gets back.
  const accessLog = pinoHttp({
    logger,
    redact: ['req.headers.authorization'],
    autoLogging: { ignore: (req) => req.url === '/health' || req.url === '/ready' },
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
  });
  server = createServer((req, res) => {
    accessLog(req, res);
    void yoga(req, res);
  });
  server.on('error', (error) => {
    logger.fatal({ err: error }, `cannot listen on ${config.HOST}:${config.PORT}`);
    void shutdown('listen failed', 1);
  });
  server.listen(config.PORT, config.HOST, () => {
    const address = server!.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    logger.info(
      { graphiql: `http://${config.HOST}:${port}/graphql`, rest: `http://${config.HOST}:${port}${config.REST_BASE_PATH}` },
      'petstore-gateway is listening',
    );
  });
}

start().catch((error: unknown) => {
  logger.fatal({ err: error }, error instanceof Error ? error.message : 'start failed');
  void shutdown('start failed', 1);
});
