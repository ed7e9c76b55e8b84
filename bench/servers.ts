// The servers under test, run as a child of bench/run.ts (forked with an IPC channel).
//
// Why a separate process: autocannon (without its worker threads) generates load on the event loop
// of the process that calls it. Were the servers in that same process, every request would be
// produced and served by one thread taking turns, and the figures would measure the load generator
// as much as the server. Here the servers own this process's event loop; the load generator owns
// its own. (FerretDB is a third process, started below.)
//
// What it serves, each on its own loopback port, for each of two stores:
//   - baseline: a raw node:http handler calling the repository directly and writing JSON (the floor);
//   - app: the real service from createApp (Yoga at /graphql, the REST adapter at /v1).
// Stores: `ferretdb`, the Mongo repository over the embedded FerretDB (one MongoClient shared by
// both servers); `memory`, the same seeded pets in an in-memory repository, so that a second pass
// can show the cost of the HTTP/GraphQL/REST layers without the database's cost hiding it.
//
// Protocol with the parent, over process.send:
//   child → parent  { type: 'ready', ... }   once the database is seeded and both servers listen
//   parent → child  { type: 'rss', id }     → child → parent { type: 'rss', id, rss }
//   parent → child  { type: 'stop' }        → closes everything, removes the temp dir, exits 0
// A lost channel (parent died) or SIGINT/SIGTERM also shuts everything down.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/db/embedded.ts';
import { connectDatabase, type Database } from '../src/db/mongo.ts';
import { PET_STATUSES } from '../src/pets/pet.ts';
import { createMongoPetRepository, ensurePetIndexes, type PetRepository } from '../src/pets/pet-repository.ts';
import { createMemoryPetRepository } from './memory-repository.ts';
import { loadOpenApiDocument } from '../src/rest/openapi-document.ts';
import type { ChildMessage, DatabaseInfo, ParentMessage, StoreUrls } from './protocol.ts';

const SEED_PETS = Number(process.env.BENCH_SEED_PETS ?? 200);
const API_KEY = `bench_${randomBytes(16).toString('hex')}`;

function send(message: ChildMessage): void {
  process.send?.(message);
}

function log(message: string): void {
  process.stderr.write(`[bench servers] ${message}\n`);
}

/** The floor: routing, the same repository call, JSON.stringify; no auth, no GraphQL, no adapter. */
function baselineHandler(pets: PetRepository) {
  const fail = (res: ServerResponse, status: number) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status }));
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const json = (body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
    if (req.method !== 'GET') return fail(res, 405);
    if (url.pathname === '/pets') {
      const limit = Number(url.searchParams.get('limit') ?? 20);
      pets.listPage({ limit }).then((page) => json(page.pets), () => fail(res, 500));
      return;
    }
    const byId = /^\/pets\/([0-9]+)$/.exec(url.pathname);
    if (byId?.[1]) {
      pets.findById(Number(byId[1])).then((pet) => (pet ? json(pet) : fail(res, 404)), () => fail(res, 500));
      return;
    }
    fail(res, 404);
  };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((done) => server.close(() => done()));
  server.closeAllConnections();
  await closed;
}

/** Our build reports ferretdbVersion "unknown" (no version.txt), so read the version it was built from. */
function ferretDbModuleVersion(): string {
  try {
    const goMod = readFileSync(fileURLToPath(new URL('../tools/ferretdb/go.mod', import.meta.url)), 'utf8');
    return /github\.com\/FerretDB\/FerretDB (v\S+)/.exec(goMod)?.[1] ?? 'v1';
  } catch {
    return 'v1';
  }
}

async function describeDatabase(database: Database, embedded: EmbeddedDatabase): Promise<DatabaseInfo> {
  const info: DatabaseInfo = { kind: embedded.kind, label: embedded.kind };
  try {
    const build = (await database.db.admin().command({ buildInfo: 1 })) as Record<string, unknown>;
    if (typeof build.version === 'string') info.wireVersion = build.version;
    if (typeof build.ferretdbVersion === 'string' && build.ferretdbVersion !== 'unknown') info.ferretdbVersion = build.ferretdbVersion;
  } catch {
    // Only used for the label; the run goes on without it.
  }
  if (embedded.kind === 'ferretdb') {
    // tools/ferretdb/main.go always runs FerretDB v1 with its SQLite handler.
    info.ferretdbVersion ??= ferretDbModuleVersion();
    info.label = `FerretDB ${info.ferretdbVersion} (SQLite backend), embedded, on loopback`;
  } else {
    info.label = `${embedded.kind} ${info.wireVersion ?? ''} (fallback: FerretDB could not start), on loopback`.replace('  ', ' ');
  }
  return info;
}

/** The baseline and the real app over one repository, each on its own loopback port. */
async function startServers(pets: PetRepository): Promise<StoreUrls> {
  const baseline = createServer(baselineHandler(pets));
  const app = createServer(
    createApp({
      pets,
      apiKeys: [API_KEY],
      // Silent, as a benchmark should not measure log I/O; the per-request child logger still runs.
      logger: pino({ level: 'silent' }),
      restBasePath: '/v1',
      maxBodyBytes: 16_384,
      openApiDocument: loadOpenApiDocument(),
      checkDatabase: async () => {},
    }),
  );
  servers.push(baseline, app);
  return { baselineUrl: await listen(baseline), appUrl: await listen(app) };
}

const dataDir = mkdtempSync(join(tmpdir(), 'petstore-bench-db-'));
let embedded: EmbeddedDatabase | undefined;
let database: Database | undefined;
const servers: Server[] = [];
let stopping: Promise<void> | undefined;

function shutdown(code: number): Promise<void> {
  stopping ??= (async () => {
    for (const server of servers) await closeServer(server).catch(() => {});
    await database?.close().catch(() => {});
    await embedded?.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(code);
  })();
  return stopping;
}

process.on('SIGINT', () => void shutdown(130));
process.on('SIGTERM', () => void shutdown(143));
// The parent went away (crash, kill -9): never outlive it, nor leave FerretDB behind.
process.on('disconnect', () => void shutdown(0));
process.on('message', (message: ParentMessage) => {
  if (message.type === 'rss') send({ type: 'rss', id: message.id, rss: process.memoryUsage().rss });
  if (message.type === 'stop') void shutdown(0);
});

try {
  embedded = await startEmbeddedDatabase({ dataDir, log });
  database = await connectDatabase(embedded.uri, 'petstore_bench');
  await ensurePetIndexes(database.db);
  const pets = createMongoPetRepository(database.db, { serializeIdAllocation: database.isFerretDb });

  const seedStarted = Date.now();
  for (let i = 0; i < SEED_PETS; i++) {
    await pets.create({ name: `Pet ${i + 1}`, categoryId: (i % 7) + 1, status: PET_STATUSES[i % PET_STATUSES.length] });
  }
  const page = await pets.listPage({ limit: SEED_PETS });
  const sampleId = page.pets[Math.floor(page.pets.length / 2)]?.id;
  if (sampleId === undefined) throw new Error('seeding left no pets');
  log(`seeded ${page.pets.length} pets in ${Date.now() - seedStarted} ms`);

  const stores = {
    ferretdb: await startServers(pets),
    memory: await startServers(createMemoryPetRepository(page.pets)),
  };

  send({
    type: 'ready',
    stores,
    apiKey: API_KEY,
    sampleId,
    seeded: page.pets.length,
    database: await describeDatabase(database, embedded),
    rss: process.memoryUsage().rss,
    pid: process.pid,
  });
} catch (error) {
  log(`failed to start: ${(error as Error).stack ?? String(error)}`);
  send({ type: 'failed', message: (error as Error).message });
  await shutdown(1);
}
