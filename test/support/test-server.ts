import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import supertest from 'supertest';
import { inject } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/mongo.ts';
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
  database: Database;
  dbName: string;
  close(): Promise<void>;
}

export async function graphqlRequest(
  server: TestServer,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = AUTH,
) {
  return server.request.post('/graphql').set(headers).send({ query, variables });
}

export interface TestServerOptions {
  /** Share a database with another server (several service instances on one database). */
  dbName?: string;
  restBasePath?: string;
  maxBodyBytes?: number;
  maxGraphQLBodyBytes?: number;
  /** Another database server than the run's shared one. */
  mongoUri?: string;
  /** Keep the database when closing (restart tests). */
  keepDatabase?: boolean;
}

/** A unique database name per test file (and per call), so files never see each other's pets. */
export function uniqueDbName(prefix = 'test'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/**
 * The real service, from the same composition root main.ts uses (edge, access log, request ids
 * included), on a real node:http server on a random loopback port, over the run's real database.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dbName = options.dbName ?? uniqueDbName();
  const database = await connectDatabase(options.mongoUri ?? inject('mongoUri'), dbName);
  await ensurePetIndexes(database.db);
  const service = createService({
    pets: createMongoPetRepository(database.db, { serializeIdAllocation: database.isFerretDb }),
    checkDatabase: database.ping,
    apiKeys: [API_KEY, OTHER_API_KEY],
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    restBasePath: options.restBasePath ?? '/v1',
    maxBodyBytes: options.maxBodyBytes ?? 16_384,
    ...(options.maxGraphQLBodyBytes ? { maxGraphQLBodyBytes: options.maxGraphQLBodyBytes } : {}),
  });
  const http = createServer(service.listener);
  await new Promise<void>((listening) => http.listen(0, '127.0.0.1', listening));
  const { port } = http.address() as AddressInfo;
  return {
    service,
    http,
    baseUrl: `http://127.0.0.1:${port}`,
    request: supertest(http),
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
