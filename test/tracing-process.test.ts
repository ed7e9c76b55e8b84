import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TRACING_FLUSH_DEADLINE_MS } from '../src/telemetry/settings.ts';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { AUTH, uniqueDbName } from './support/test-server.ts';

// The compiled service as `npm start` runs it (node --import=./dist/telemetry/register.js), with a
// probe preloaded (NODE_OPTIONS=--require) that records, as the process exits, which OpenTelemetry
// packages were loaded, what was registered with the API, and whether require or node:http was patched.
const PROBE = `
const { writeFileSync } = require('node:fs');
const Module = require('node:module');
const http = require('node:http');
const untouched = { require: Module.prototype.require, emit: http.Server.prototype.emit };
process.on('exit', () => {
  const registry = globalThis[Symbol.for('opentelemetry.js.api.1')] ?? {};
  const packages = Object.keys(require.cache)
    .map((file) => /node_modules\\/(@opentelemetry\\/[^/]+)\\//.exec(file)?.[1])
    .filter(Boolean);
  writeFileSync(process.env.TRACING_PROBE_FILE, JSON.stringify({
    packages: [...new Set(packages)].sort(),
    registered: Object.keys(registry).filter((key) => key !== 'version').sort(),
    requirePatched: Module.prototype.require !== untouched.require,
    httpPatched: http.Server.prototype.emit !== untouched.emit,
  }));
});
`;

interface Probe {
  packages: string[];
  registered: string[];
  requirePatched: boolean;
  httpPatched: boolean;
}

const probeDir = mkdtempSync(join(tmpdir(), 'petstore-tracing-probe-'));
const probeScript = join(probeDir, 'probe.cjs');
writeFileSync(probeScript, PROBE);
afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

const services = new Set<ServiceProcess>();
afterEach(() => {
  for (const service of services) service.kill();
  services.clear();
});

/** The compiled service on the run's database, probed; `env` adds the OTEL_* variables of a test. */
async function start(env: Record<string, string>, probeFile: string): Promise<ServiceProcess> {
  const service = await startServiceOnRunDatabase({
    dbName: uniqueDbName('tracing'),
    env: {
      NODE_OPTIONS: `--require=${probeScript}`,
      TRACING_PROBE_FILE: probeFile,
      ...env,
    },
  });
  services.add(service);
  return service;
}

const probed = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Probe;

/** A Collector that accepts connections and never answers: every export hangs until its timeout. */
async function frozenCollector(): Promise<{ url: string; connections: () => number; close(): void }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** A loopback port nothing listens on: every export is refused. */
async function unreachableCollector(): Promise<{ url: string; connections: () => number; close(): void }> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as { port: number };
  await new Promise((closed) => server.close(closed));
  return { url: `http://127.0.0.1:${port}`, connections: () => 0, close: () => {} };
}

describe('with no OTLP endpoint in the environment, tracing costs nothing', () => {
  it('the compiled service loads no OpenTelemetry SDK, registers nothing and patches neither require nor node:http', {
    timeout: 90_000,
  }, async () => {
    const probeFile = join(probeDir, 'off.json');
    const service = await start({}, probeFile);
    expect((await fetch(`${service.origin}/v1/pets`, { headers: AUTH })).status).toBe(200);
    expect(service.log.join('\n')).toContain('"tracing":"off"');
    expect(await service.stop()).toBe(0);

    // prom-client loads the API (a no-op until something registers with it): nothing else.
    expect(probed(probeFile)).toEqual({
      packages: ['@opentelemetry/api'],
      registered: [],
      requirePatched: false,
      httpPatched: false,
    });
  });
});

describe.each([
  ['frozen (accepts, never answers)', frozenCollector],
  ['unreachable (connection refused)', unreachableCollector],
])('with a Collector that is %s', (_name, collectorOf) => {
  it('no response waits for it, and SIGTERM still exits within the flush deadline', { timeout: 90_000 }, async () => {
    const collector = await collectorOf();
    const probeFile = join(probeDir, `on-${Date.now()}.json`);
    try {
      const service = await start(
        { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
        probeFile,
      );
      expect(service.log.join('\n')).toContain(`"tracing":"${collector.url}"`);
      const took: number[] = [];
      for (let i = 0; i < 40; i++) {
        const sent = performance.now();
        const response = await fetch(`${service.origin}/v1/pets?limit=5`, { headers: AUTH });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
        took.push(performance.now() - sent);
        await new Promise((waited) => setTimeout(waited, 10));
      }
      // An export waits up to OTEL_EXPORTER_OTLP_TIMEOUT (10 s): a response that waited for one would show it.
      expect(Math.max(...took)).toBeLessThan(1_000);

      const signalled = performance.now();
      expect(await service.stop('SIGTERM')).toBe(0);
      expect(performance.now() - signalled).toBeLessThan(TRACING_FLUSH_DEADLINE_MS + 3_000);
      expect(service.log.join('\n')).toMatch(
        /tracing: the last spans were not all exported|tracing: spans may be lost/,
      );

      // The same probe that saw nothing without the endpoint sees the SDK at work here.
      const probe = probed(probeFile);
      expect(probe.packages).toEqual(
        expect.arrayContaining(['@opentelemetry/sdk-trace-node', '@opentelemetry/instrumentation-mongodb']),
      );
      expect(probe.registered).toEqual(expect.arrayContaining(['context', 'propagation', 'trace']));
      expect(probe).toMatchObject({ requirePatched: true, httpPatched: true });
      if (collectorOf === frozenCollector) expect(collector.connections()).toBeGreaterThan(0);
    } finally {
      collector.close();
    }
  });
});
