import { randomBytes } from 'node:crypto';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import supertest from 'supertest';
import { afterAll, beforeAll, inject } from 'vitest';
import { createApiKeyStore, ensureApiKeyIndexes } from '../../src/auth/api-key-store.ts';
import { connectDatabase, type Database } from '../../src/db/mongo.ts';
import type { RateLimitSettings } from '../../src/edge/rate-limits.ts';
import { createHttpServer } from '../../src/http/server.ts';
import { createIdempotencyStore, ensureIdempotencyIndexes } from '../../src/idempotency/idempotency-store.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { createMongoPetRepository, ensurePetIndexes } from '../../src/pets/pet-repository.ts';
import { createService, type Service } from '../../src/service.ts';

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
}

const UNREACHABLE = { rate: 1_000_000, burst: 1_000_000 };
const TEST_RATE_LIMITS: RateLimitSettings = { perKey: UNREACHABLE, authFailures: UNREACHABLE };

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
  const restBasePath = options.restBasePath ?? '/v1';
  const database = await connectDatabase(options.mongoUri ?? inject('mongoUri'), dbName);
  const { db } = database;
  await Promise.all([ensurePetIndexes(db), ensureApiKeyIndexes(db), ensureIdempotencyIndexes(db)]);
  const metrics = createMetrics();
  const service = createService({
    pets: createMongoPetRepository(db, {
      serializeIdAllocation: database.isFerretDb,
      onDatabaseUnavailable: metrics.countDatabaseError,
    }),
    issuedKeys: createApiKeyStore(db),
    idempotencyRecords: createIdempotencyStore(db, { onDatabaseUnavailable: metrics.countDatabaseError }),
    metrics,
    metricsOnMainPort: options.metricsOnMainPort ?? true,
    databaseClient: database.client,
    checkDatabase: database.ping,
    apiKeys: [API_KEY, OTHER_API_KEY],
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    restBasePath,
    maxBodyBytes: options.maxBodyBytes ?? 16_384,
    ...(options.maxGraphQLBodyBytes ? { maxGraphQLBodyBytes: options.maxGraphQLBodyBytes } : {}),
    ...(options.maxGraphQLListItems ? { maxGraphQLListItems: options.maxGraphQLListItems } : {}),
    rateLimits: options.rateLimits ?? TEST_RATE_LIMITS,
  });
  await service.ready;
  const { http, baseUrl } = await listenOnLoopback(service.listener);
  return {
    service,
    http,
    baseUrl,
    request: supertest(http),
    restBasePath,
    database,
    dbName,
    async close() {
      await new Promise<void>((closed) => http.close(() => closed()));
      http.closeAllConnections();
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
