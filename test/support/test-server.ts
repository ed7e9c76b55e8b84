import { randomBytes } from 'node:crypto';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Tracer } from '@opentelemetry/api';
import { type Logger, pino } from 'pino';
import supertest from 'supertest';
import { afterAll, beforeAll, inject } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { connectDatabase, type Database } from '../../src/db/mongo.ts';
import type { RateLimitSettings } from '../../src/edge/rate-limits.ts';
import { acceptUpgrades, createHttpServer } from '../../src/http/server.ts';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.ts';
import { createService, type Service } from '../../src/service.ts';
import { createMongoStores, type Stores } from '../../src/stores.ts';

export const API_KEY = 'test-key-aaaaaaaaaaaaaaaaaaaa';
export const OTHER_API_KEY = 'test-key-bbbbbbbbbbbbbbbbbbbb';
export const AUTH = { Authorization: `Bearer ${API_KEY}` };

export interface TestServer {
  service: Service;
  http: Server;
  baseUrl: string;
  request: ReturnType<typeof supertest>;
  /** Where the REST API is mounted (REST_BASE_PATH). */
  restBasePath: string;
  database: Database;
  dbName: string;
  /** The service's metrics, as a scrape would read them (`metrics.scrape.text()`). */
  metrics: Metrics;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Share a database with another server (several service instances on one database). */
  dbName?: string;
  restBasePath?: string;
  maxBodyBytes?: number;
  maxGraphQLBodyBytes?: number;
  maxGraphQLListItems?: number;
  /** Rate limits; by default so high that no test meets them (their headers are still sent). */
  rateLimits?: RateLimitSettings;
  /** Another database server than the run's shared one. */
  mongoUri?: string;
  /** Keep the database when closing (restart tests). */
  keepDatabase?: boolean;
  /** False: /metrics is only on the service's metricsListener, as with METRICS_PORT. */
  metricsOnMainPort?: boolean;
  /** Wraps the stores the service gets (the real Mongo stores on the run's database). */
  wrapStores?: (stores: Stores) => Stores;
  /** Where the service logs: a silent logger unless given (TEST_LOG_LEVEL sets its level). */
  logger?: Logger;
  /** REDIS_URL: the rate limits count in this Redis, shared with every service given the same. */
  redisUrl?: string;
  /** TRUST_PROXY, as the environment would give it (`loopback`, `10.0.0.0/8, 192.168.1.7`). */
  trustProxy?: string;
  /** Tracing on, as register.ts turns it on for the service (see support/traced-process.ts). */
  tracer?: Tracer;
  /** TRUSTED_DOCUMENTS: off (the default), log or enforce. API_KEY and OTHER_API_KEY may send any document. */
  trustedDocuments?: 'off' | 'log' | 'enforce';
  /** CORS_ORIGINS, as the environment would give it (`http://localhost:5173,https://app.example.com`). */
  corsOrigins?: string;
  /** Any other variables, as the environment would give them (`MAX_SUBSCRIPTIONS: '2'`). */
  env?: Record<string, string>;
}

const UNREACHABLE = { rate: 1_000_000, burst: 1_000_000 };
/** How long close() waits for requests still running before it cuts every connection. */
const CLOSE_GRACE_MS = 2_000;
const TEST_RATE_LIMITS: RateLimitSettings = { perKey: UNREACHABLE, authFailures: UNREACHABLE };

/** The service's configuration for a test: the defaults, with what the test sets. */
function configOf(options: TestServerOptions) {
  const { perKey, authFailures } = options.rateLimits ?? TEST_RATE_LIMITS;
  const set = (value: number | undefined) => (value === undefined ? undefined : String(value));
  return parseConfig({
    API_KEYS: `${API_KEY},${OTHER_API_KEY}`,
    REST_BASE_PATH: options.restBasePath,
    MAX_BODY_BYTES: set(options.maxBodyBytes),
    MAX_GRAPHQL_BODY_BYTES: set(options.maxGraphQLBodyBytes),
    MAX_GRAPHQL_LIST_ITEMS: set(options.maxGraphQLListItems),
    RATE_LIMIT_PER_KEY: set(perKey.rate),
    RATE_LIMIT_BURST: set(perKey.burst),
    AUTH_FAILURE_LIMIT: set(authFailures.rate),
    AUTH_FAILURE_BURST: set(authFailures.burst),
    // Any port but the API's: what matters is that /metrics moves off it.
    METRICS_PORT: options.metricsOnMainPort === false ? '9' : undefined,
    REDIS_URL: options.redisUrl,
    TRUST_PROXY: options.trustProxy,
    TRUSTED_DOCUMENTS: options.trustedDocuments,
    CORS_ORIGINS: options.corsOrigins,
    ...options.env,
  });
}

/** A unique database name per test file (and per call), so files never see each other's pets. */
export function uniqueDbName(prefix = 'test'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** A node:http server for this listener on a random loopback port. */
export async function listenOnLoopback(listener: RequestListener): Promise<{ http: Server; baseUrl: string }> {
  const http = createHttpServer(listener);
  await new Promise<void>((listening) => http.listen(0, '127.0.0.1', listening));
  return { http, baseUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
}

/**
 * The real service, from the same composition root main.ts uses (edge, access log, request ids
 * included), on a real node:http server on a random loopback port, over the run's real database.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dbName = options.dbName ?? uniqueDbName();
  const database = await connectDatabase(options.mongoUri ?? inject('mongoUri'), dbName);
  const logger = options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const metrics = createMetrics();
  const stores = await createMongoStores(database, { metrics, logger });
  const config = configOf(options);
  const dependencies = {
    config,
    stores: options.wrapStores ? options.wrapStores(stores) : stores,
    logger,
    metrics,
    ...(options.tracer ? { tracer: options.tracer } : {}),
  };
  // A service that refuses to start leaves no connection behind.
  const service = await Promise.resolve()
    .then(() => createService(dependencies))
    .catch(async (error: unknown) => {
      await database.close();
      throw error;
    });
  await service.ready;
  const { http, baseUrl } = await listenOnLoopback(service.listener);
  acceptUpgrades(http, service.upgrade);
  return {
    service,
    http,
    baseUrl,
    request: supertest(http),
    restBasePath: config.REST_BASE_PATH,
    database,
    dbName,
    metrics,
    async close() {
      // WebSockets hold http.close until they are gone: closed first.
      await service.endStreams();
      const closed = new Promise<void>((done) => http.close(() => done()));
      // close() waits for a socket that has sent no request yet (a browser's preconnect) as for one
      // mid-request: a moment for a request to finish, then every connection is cut.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((waited) => (grace = setTimeout(waited, CLOSE_GRACE_MS)))]);
      clearTimeout(grace);
      http.closeAllConnections();
      await closed;
      await service.close();
      // Harmless on FerretDB's throwaway directory; keeps a real MONGODB_URI clean.
      if (!options.keepDatabase) await database.db.dropDatabase();
      await database.close();
    },
  };
}

/**
 * The service after its database client was closed under it: every query now fails with a driver
 * error nobody planned for. Closing it stops the HTTP server only; there is no database left to drop.
 */
export async function startServerWithLostDatabase(): Promise<TestServer> {
  const server = await startTestServer();
  await server.database.client.close();
  return {
    ...server,
    async close() {
      const closed = new Promise<void>((resolve) => server.http.close(() => resolve()));
      server.http.closeAllConnections();
      await closed;
    },
  };
}

/**
 * The test server of a file (or of a describe block): started in beforeAll, closed in afterAll. Read
 * it inside tests and hooks; before its beforeAll has run there is no server yet.
 */
export function useTestServer(options: TestServerOptions = {}): TestServer {
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startTestServer(options);
  });
  afterAll(async () => {
    await started?.close();
  });
  const current = (): TestServer => {
    if (!started) throw new Error('the test server starts in beforeAll: read it inside tests and hooks');
    return started;
  };
  // Every property is read from the started server at the moment a test reads it.
  return new Proxy({} as TestServer, { get: (_target, key) => Reflect.get(current(), key) });
}
