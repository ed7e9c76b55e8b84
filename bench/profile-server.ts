// The process `npm run profile` (bench/profile.ts) runs under --cpu-prof: one target of the bench over
// the in-memory store, on a loopback port. Messages from the parent: 'mark' (the measured window
// starts), 'stop' (it ends: answers with the window and the CPU used, closes, exits so V8 writes the
// profile). A lost parent ends it too.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../src/http/server.ts';
import { fastifyPeer, mercuriusPeer } from './fastify-peers.ts';
import { createMemoryPetRepository } from './memory-repository.ts';
import { seedPet } from './seed.ts';
import { BENCH_RATE_PER_KEY, floorListener, ourService, peerContext, REST_BASE_PATH } from './targets.ts';

export interface ProfileServerConfig {
  /** 'floor', a fastify-based peer (their log at info whatever the level), or our service (REST and GraphQL alike). */
  target: 'floor' | 'fastify' | 'mercurius' | 'service';
  logLevel: string;
  apiKey: string;
  seedPets: number;
}

/** What the parent learns when the window ends: times are CLOCK_MONOTONIC µs, the profile's clock. */
export interface ProfileWindow {
  type: 'window';
  fromUs: number;
  toUs: number;
  requests: number;
  /** CPU of every thread of the process (main, GC helpers, libuv pool) in the window, µs. */
  cpuUs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ProfileServerConfig;
const pets = createMemoryPetRepository(Array.from({ length: config.seedPets }, (_, id) => seedPet(id + 1)));
const service =
  config.target === 'service' ? ourService(pets, config.apiKey, { logLevel: config.logLevel }) : undefined;
const peer = {
  floor: undefined,
  service: undefined,
  fastify: () => fastifyPeer(pets, REST_BASE_PATH, BENCH_RATE_PER_KEY),
  mercurius: () => mercuriusPeer(peerContext(pets), BENCH_RATE_PER_KEY),
}[config.target]?.();
const listener = service?.listener ?? peer?.listener ?? floorListener(pets);
let served = 0;
const counted: typeof listener = (req, res) => {
  served++;
  listener(req, res);
};
// Our service in the server main.ts builds; the floor and the peers in a bare node:http one, as in the bench.
const server = service ? createHttpServer(counted) : createServer(counted);
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
let mark = { atUs: 0, served: 0, cpu: process.cpuUsage() };

async function stop(): Promise<void> {
  const cpu = process.cpuUsage(mark.cpu);
  const window: ProfileWindow = {
    type: 'window',
    fromUs: mark.atUs,
    toUs: monotonicUs(),
    requests: served - mark.served,
    cpuUs: cpu.user + cpu.system,
  };
  process.send?.(window);
  server.closeAllConnections();
  await new Promise((closed) => server.close(closed));
  await service?.close();
  await peer?.close();
  process.exit(0);
}

process.on('message', (message) => {
  if (message === 'mark') mark = { atUs: monotonicUs(), served, cpu: process.cpuUsage() };
  if (message === 'stop') void stop();
});
process.on('disconnect', () => process.exit(1));
await service?.ready;
await peer?.ready;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
