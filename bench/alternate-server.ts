// The process `npm run bench:alternate` (bench/alternate.ts) loads: our service once per log level
// asked for, all over one in-memory store, each on its own loopback port, in the server main.ts
// builds. A lost parent ends it.

import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../src/http/server.ts';
import { createMemoryPetRepository } from './memory-repository.ts';
import { seedPet } from './seed.ts';
import { ourService } from './targets.ts';

export interface AlternateServerConfig {
  levels: string[];
  apiKey: string;
  seedPets: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as AlternateServerConfig;
const pets = createMemoryPetRepository(Array.from({ length: config.seedPets }, (_, id) => seedPet(id + 1)));
const urls: string[] = [];
for (const level of config.levels) {
  const service = ourService(pets, config.apiKey, { logLevel: level });
  await service.ready;
  const server = createHttpServer(service.listener);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready', urls });
