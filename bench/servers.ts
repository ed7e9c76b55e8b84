// The servers under test, forked by bench/run.ts with an IPC channel. They live apart from the load
// generator because autocannon (without workers) produces load on its caller's event loop: sharing
// one loop, the figures would measure the generator as much as the servers.
//
// Per store asked for: the targets of bench/targets.ts (the tracing processes' apart), each on its own
// loopback port, `rest-redis` counting its limits in one redis-server started here
// (test/support/redis-server.ts). With FerretDB (bench/databases.ts): the store in database
// `petstore_bench`, and for the cost curve, per size N, a floor server over
// `petstore_bench_curve_N` holding pets 1..N. Messages: protocol.ts.
// A lost channel (the parent died), a signal or `stop` closes everything, stops FerretDB and Redis, exits.

import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../src/http/server.ts';
import type { PetRepository } from '../src/pets/pet-repository.ts';
import { createPetRepository } from '../src/stores.ts';
import { type RedisServer, startRedisServer } from '../test/support/redis-server.ts';
import { createDatabases } from './databases.ts';
import { type InFlight, trackInFlight } from './in-flight.ts';
import { createMemoryPetRepository } from './memory-repository.ts';
import {
  type ChildMessage,
  type CurveStore,
  type Ready,
  type Request,
  type ServersConfig,
  type StoreName,
  TARGETS,
  tracingModeOf,
} from './protocol.ts';
import { resetPets, seedPet, seedPets } from './seed.ts';
import { createTargets, floorListener, type Listener, type MainTarget, type Targets } from './targets.ts';

const config = JSON.parse(process.argv[2] ?? '{}') as ServersConfig;
// Token68 characters only, and longer than the 16 our key rules ask for.
const API_KEY = `bench-${randomBytes(16).toString('hex')}`;
const log = (message: string) => process.stderr.write(`[bench servers] ${message}\n`);
const send = (message: ChildMessage) => process.send?.(message);

const servers: Server[] = [];
const targets: Targets[] = [];
/** Per store: its calls in flight (see in-flight.ts) and how to put its seeded pets back. */
const stores = new Map<
  StoreName | CurveStore,
  { settled: InFlight<PetRepository>['settled']; reset: () => Promise<void> }
>();
const SETTLE_TIMEOUT_MS = 30_000;
let stopping: Promise<void> | undefined;
const databases = createDatabases(log, () => void shutdown(1));
let redis: RedisServer | undefined;

/** Our service's targets run in the server main.ts builds; the floor and the peers in a bare node:http one. */
const NOT_OURS: ReadonlySet<string> = new Set(['floor', 'sofa', 'fastify', 'yoga', 'mercurius'] satisfies MainTarget[]);

async function listen(listener: Listener, ours = false): Promise<string> {
  const server = ours ? createHttpServer(listener) : createServer(listener);
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The targets over `inner`, counted so a settle request can wait for their work to finish. */
async function serveStore(
  store: StoreName,
  inner: PetRepository,
  reset: () => Promise<void>,
): Promise<Record<MainTarget, string>> {
  const { pets, settled } = trackInFlight(inner);
  stores.set(store, { settled, reset });
  redis ??= await startRedisServer();
  const created = createTargets(pets, API_KEY, redis.url);
  targets.push(created);
  await created.ready;
  const mine = TARGETS.filter((target): target is MainTarget => tracingModeOf(target) === undefined);
  const urls = await Promise.all(
    mine.map(async (target) => [target, await listen(created.listeners[target], !NOT_OURS.has(target))] as const),
  );
  return Object.fromEntries(urls) as Record<MainTarget, string>;
}

async function start(): Promise<Ready> {
  const urls: Ready['urls'] = {};
  const seeded = Array.from({ length: config.seedPets }, (_, i) => seedPet(i + 1));
  if (config.stores.includes('memory')) {
    const pets = createMemoryPetRepository(seeded);
    urls.memory = await serveStore('memory', pets, async () => pets.reset());
  }
  if (config.stores.includes('ferretdb')) {
    const database = await databases.open('petstore_bench');
    const { db } = database;
    await seedPets(db, 0, config.seedPets);
    const pets = createPetRepository(database);
    urls.ferretdb = await serveStore('ferretdb', pets, () => resetPets(db, config.seedPets));
  }
  const curveUrls: Ready['curveUrls'] = {};
  for (const size of config.curveSizes) {
    const database = await databases.open(`petstore_bench_curve_${size}`);
    await seedPets(database.db, 0, size);
    // Read-only: counted only so that a settle waits for queued gets before the next run.
    const { pets, settled } = trackInFlight(createPetRepository(database));
    stores.set(`curve-${size}`, { settled, reset: async () => {} });
    curveUrls[size] = await listen(floorListener(pets));
  }
  const database = databases.info();
  const rss = process.memoryUsage().rss;
  return { type: 'ready', urls, curveUrls, apiKey: API_KEY, rss, pid: process.pid, ...(database ? { database } : {}) };
}

async function answer(request: Exclude<Request, { type: 'stop' }>): Promise<void> {
  let error: string | undefined;
  try {
    if (request.type === 'settle') {
      const store = stores.get(request.store);
      if (!store) throw new Error(`no store ${request.store} here`);
      await store.settled(SETTLE_TIMEOUT_MS);
      if (request.reset) await store.reset();
    }
  } catch (failure) {
    error = (failure as Error).message;
  }
  send({ type: 'reply', id: request.id, rss: process.memoryUsage().rss, ...(error ? { error } : {}) });
}

function shutdown(code: number): Promise<void> {
  stopping ??= (async () => {
    for (const server of servers) {
      server.close();
      server.closeAllConnections();
    }
    // Let work already started finish before its database goes away, but not for long.
    for (const store of stores.values()) await store.settled(5_000).catch(() => {});
    for (const created of targets) await created.close().catch(() => {});
    await databases.close();
    await redis?.stop().catch(() => {});
    process.exit(code);
  })();
  return stopping;
}

process.on('SIGINT', () => void shutdown(130));
process.on('SIGTERM', () => void shutdown(143));
// The parent went away (crash, kill -9): never outlive it, nor leave FerretDB behind.
process.on('disconnect', () => void shutdown(0));
process.on('message', (request: Request) => void (request.type === 'stop' ? shutdown(0) : answer(request)));

try {
  send(await start());
} catch (error) {
  log(`failed to start: ${(error as Error).stack ?? String(error)}`);
  send({ type: 'failed', message: (error as Error).message });
  await shutdown(1);
}
