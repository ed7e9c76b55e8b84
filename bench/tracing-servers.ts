// A tracing process of `npm run bench` (protocol.ts, TRACING_MODES): our service alone, per store, on
// a loopback port, started with `npm start`'s flags, so the telemetry entry traces exactly when the
// OTEL_* variables the parent gave say so. Its pets: the same seeded ones in memory, or the main
// process's FerretDB database (read only: these targets only get). Messages: protocol.ts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { connectDatabase, type Database } from '../src/db/mongo.ts';
import type { PetRepository } from '../src/pets/pet-repository.ts';
import type { Service } from '../src/service.ts';
import { createPetRepository } from '../src/stores.ts';
import { DEFAULT_SERVICE_NAME } from '../src/telemetry/settings.ts';
import { type InFlight, trackInFlight } from './in-flight.ts';
import { createMemoryPetRepository } from './memory-repository.ts';
import type { ChildMessage, Ready, Request, StoreName, Target, TracingServersConfig } from './protocol.ts';
import { seedPet } from './seed.ts';
import { ourService } from './targets.ts';

const config = JSON.parse(process.argv[2] ?? '{}') as TracingServersConfig;
const send = (message: ChildMessage) => process.send?.(message);
const servers: Server[] = [];
const services: Service[] = [];
const databases: Database[] = [];
const settled = new Map<StoreName, InFlight<PetRepository>['settled']>();
// The provider register.ts set up, through the API's global registry (it ran from dist/, we from src/).
const tracer = config.mode === 'otel-off' ? undefined : trace.getTracer(DEFAULT_SERVICE_NAME);
let stopping: Promise<void> | undefined;

async function petsOf(store: StoreName): Promise<PetRepository> {
  if (store === 'memory')
    return createMemoryPetRepository(Array.from({ length: config.seedPets }, (_, i) => seedPet(i + 1)));
  if (!config.mongoUri) throw new Error('the ferretdb store needs the main process database (mongoUri)');
  const database = await connectDatabase(config.mongoUri, 'petstore_bench');
  databases.push(database);
  return createPetRepository(database);
}

async function serve(store: StoreName): Promise<Partial<Record<Target, string>>> {
  const { pets, settled: settledWithin } = trackInFlight(await petsOf(store));
  settled.set(store, settledWithin);
  const service = ourService(pets, config.apiKey, tracer ? { tracer } : {});
  services.push(service);
  const server = createServer(service.listener);
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { [`rest-${config.mode}`]: url, [`graphql-${config.mode}`]: url };
}

async function answer(request: Exclude<Request, { type: 'stop' }>): Promise<void> {
  let error: string | undefined;
  try {
    // Nothing to reset: these targets never create (the main process resets the shared database).
    if (request.type === 'settle') await settled.get(request.store as StoreName)?.(30_000);
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
    for (const service of services) await service.close().catch(() => {});
    for (const database of databases) await database.close().catch(() => {});
    process.exit(code);
  })();
  return stopping;
}

process.on('SIGINT', () => void shutdown(130));
process.on('SIGTERM', () => void shutdown(143));
process.on('disconnect', () => void shutdown(0));
process.on('message', (request: Request) => void (request.type === 'stop' ? shutdown(0) : answer(request)));

try {
  const urls: Ready['urls'] = {};
  for (const store of config.stores) urls[store] = await serve(store);
  const rss = process.memoryUsage().rss;
  send({ type: 'ready', urls, curveUrls: {}, apiKey: config.apiKey, rss, pid: process.pid });
} catch (error) {
  process.stderr.write(`[bench ${config.mode}] failed to start: ${(error as Error).stack ?? String(error)}\n`);
  send({ type: 'failed', message: (error as Error).message });
  await shutdown(1);
}
