import { fileURLToPath } from 'node:url';
import { afterEach, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { API_KEY, uniqueDbName } from './support/test-server.ts';

const HOOK = fileURLToPath(new URL('./support/module-loads-hook.mjs', import.meta.url));

let service: ServiceProcess | undefined;
afterEach(() => service?.kill());

/** The ws and graphql-ws modules the service process loaded, as its loader hook reported them. */
const transportLoads = (log: string[]) =>
  log.filter((line) => /^module-load .*\/node_modules\/(ws|graphql-ws)\//.test(line));

it('the compiled service loads ws and graphql-ws only on its first WebSocket upgrade', {
  timeout: 90_000,
}, async () => {
  service = await startServiceOnRunDatabase({
    dbName: uniqueDbName('lazy'),
    env: { NODE_OPTIONS: `--import=${HOOK}` },
  });
  const { origin, log } = service;
  expect(log.some((line) => line.startsWith('module-load '))).toBe(true);

  expect((await fetch(`${origin}/ready`)).status).toBe(200);
  const pets = await fetch(`${origin}/v1/pets`, { headers: { Authorization: `Bearer ${API_KEY}` } });
  expect(pets.status).toBe(200);
  expect(transportLoads(log)).toEqual([]);

  const socket = new WebSocket(`${origin.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  await new Promise((opened, failed) => {
    socket.once('open', opened);
    socket.once('error', failed);
  });
  socket.close();
  // Its stderr is read through a pipe: the lines may come just after the socket opened.
  await vi.waitFor(() => {
    expect(transportLoads(log).some((line) => line.includes('/node_modules/ws/'))).toBe(true);
    expect(transportLoads(log).some((line) => line.includes('/node_modules/graphql-ws/'))).toBe(true);
  });
});
