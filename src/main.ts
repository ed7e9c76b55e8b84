// Side effects only: configuration, database, HTTP listener, shutdown.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { pino } from 'pino';
import { pinoHttp } from 'pino-http';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './db/embedded.ts';
import { connectDatabase } from './db/mongo.ts';
import { createMongoPetRepository } from './pets/pet-repository.ts';
import { loadOpenApiDocument } from './rest/openapi-document.ts';

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  console.error(`Invalid configuration:\n${loaded.problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exit(1);
}
const config = loaded.config;
const logger = pino({ level: config.LOG_LEVEL, base: { service: 'petstore-gateway' } });

let apiKeys = config.API_KEYS;
if (apiKeys.length === 0) {
  // Development only (production refuses to start without keys): one key for this run, shown once.
  apiKeys = [`dev_${randomBytes(24).toString('base64url')}`];
  logger.warn({ apiKey: apiKeys[0] }, 'API_KEYS is not set: generated a development key for this run');
}

let embedded: EmbeddedDatabase | undefined;
let uri = config.MONGODB_URI;
if (!uri) {
  const started = Date.now();
  embedded = await startEmbeddedDatabase({ dataDir: config.DATA_DIR, log: (message) => logger.info(message) });
  uri = embedded.uri;
  logger.info({ kind: embedded.kind, dataDir: config.DATA_DIR, ms: Date.now() - started }, 'embedded database started');
}

const database = await connectDatabase(uri, config.MONGODB_DB).catch(async (error: unknown) => {
  logger.fatal({ err: error }, 'cannot reach the database');
  await embedded?.stop();
  process.exit(1);
});

const yoga = createApp({
  pets: createMongoPetRepository(database.db),
  apiKeys,
  logger,
  restBasePath: config.REST_BASE_PATH,
  maxBodyBytes: config.MAX_BODY_BYTES,
  openApiDocument: loadOpenApiDocument(),
});

// One access-log line per request; the Authorization header is redacted, the key id is in the app's logs.
const accessLog = pinoHttp({ logger, redact: ['req.headers.authorization'] });
const server = createServer((req, res) => {
  accessLog(req, res);
  void yoga(req, res);
});
server.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info(
    { graphiql: `http://${config.HOST}:${port}/graphql`, rest: `http://${config.HOST}:${port}${config.REST_BASE_PATH}` },
    'petstore-gateway is listening',
  );
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  await new Promise<void>((done) => server.close(() => done()));
  await database.close();
  await embedded?.stop();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
