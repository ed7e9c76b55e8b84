// The service under the fan-out measurement, alone in its process: our service (createService, as
// main.ts composes it) over the in-memory store, in the node:http server main.ts builds, with the
// stream limits raised to argv[2]'s `maxStreams`. Forked by bench/fan-out.ts with --expose-gc, so a
// memory reading follows a full collection. Messages: fan-out-protocol.ts. A lost channel (the
// parent died), a signal or `stop` closes everything and exits.

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../src/http/server.ts';
import { createMetrics } from '../src/metrics/metrics.ts';
import { sampleIn } from '../test/support/metric-sample.ts';
import { fdUse, type Reply, type ServerMemory, type ServerReady, type ServerRequest } from './fan-out-protocol.ts';
import { createMemoryPetRepository } from './memory-repository.ts';
import { seedPet } from './seed.ts';
import { ourService } from './targets.ts';

const { maxStreams } = JSON.parse(process.argv[2] ?? '{}') as { maxStreams: number };
const API_KEY = `bench-${randomBytes(16).toString('hex')}`;
const SEEDED = 20;

const metrics = createMetrics();
const pets = createMemoryPetRepository(Array.from({ length: SEEDED }, (_, i) => seedPet(i + 1)));
// Config caps the per-key limit: the streams share one key only while it allows them all.
const limit = String(maxStreams);
const service = ourService(pets, API_KEY, {
  env: { MAX_SUBSCRIPTIONS: limit, MAX_SUBSCRIPTIONS_PER_KEY: limit },
  metrics,
});
const server = createHttpServer(service.listener);
let stopping = false;

const gc = (globalThis as { gc?: () => void }).gc;

async function memory(): Promise<ServerMemory> {
  if (!gc) throw new Error('run with --expose-gc');
  // Twice: the first may only promote what a second frees (weak references, finalizers).
  gc();
  await new Promise((next) => setImmediate(next));
  gc();
  const { rss, heapUsed, external } = process.memoryUsage();
  const openStreams = sampleIn(await metrics.scrape.text(), 'graphql_subscriptions_open');
  return { rss, heapUsed, external, openStreams, fds: fdUse() };
}

async function answer(request: Exclude<ServerRequest, { type: 'stop' }>): Promise<void> {
  const reply: Reply<ServerMemory> = { type: 'reply', id: request.id };
  try {
    reply.value = await memory();
  } catch (error) {
    reply.error = (error as Error).message;
  }
  process.send?.(reply);
}

async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections();
  await service.close().catch(() => {});
  process.exit(code);
}

process.on('SIGINT', () => void shutdown(130));
process.on('SIGTERM', () => void shutdown(143));
process.on('disconnect', () => void shutdown(0));
process.on('message', (request: ServerRequest) => void (request.type === 'stop' ? shutdown(0) : answer(request)));

server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.send?.({ type: 'ready', url, apiKey: API_KEY, pid: process.pid, fds: fdUse() } satisfies ServerReady);
});
