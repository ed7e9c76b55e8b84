import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import { type ServiceProcess, startServiceProcess } from './support/service-process.ts';
import { startFlags } from './support/start-flags.ts';
import { API_KEY, uniqueDbName } from './support/test-server.ts';

// Every service a test starts; one a failed assertion left running is killed after that test.
const services = new Set<ServiceProcess>();
afterEach(() => {
  for (const service of services) service.kill();
  services.clear();
});

/** A service once it listens, tracked so that a failed test still stops it. */
async function tracked(started: Promise<ServiceProcess>): Promise<ServiceProcess> {
  const service = await started;
  services.add(service);
  return service;
}

function processesMentioning(text: string): Promise<number[]> {
  const ps = spawn('ps', ['-eo', 'pid=,args='], { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve) => {
    let out = '';
    ps.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    ps.on('close', () =>
      resolve(
        out
          .split('\n')
          .filter((line) => line.includes(text) && !line.includes('ps -eo'))
          .map((line) => Number(line.trim().split(/\s+/)[0])),
      ),
    );
  });
}

const EMBEDDED = !process.env.MONGODB_URI;

describe('npm start', () => {
  it('serves the compiled service with X-Request-Id, and SIGTERM to npm stops it with exit 0', {
    timeout: 90_000,
  }, async () => {
    // As an operator starts it: npm, then the compiled service it execs.
    const service = await tracked(startServiceOnRunDatabase({ via: 'npm', dbName: uniqueDbName('main') }));
    const { origin } = service;

    expect((await fetch(`${origin}/ready`)).status).toBe(200);
    const listed = await fetch(`${origin}/v1/pets`, {
      headers: { Authorization: `Bearer ${API_KEY}`, 'X-Request-Id': 'trace-42' },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-request-id')).toBe('trace-42');
    expect((await fetch(`${origin}/health`)).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await processesMentioning('dist/main.js')).not.toHaveLength(0);

    expect(await service.stop('SIGTERM')).toBe(0);
    await expect(fetch(`${origin}/health`)).rejects.toThrow();
  });

  it.skipIf(!EMBEDDED)(
    'stops its embedded database too on SIGINT, leaving no process behind',
    { timeout: 90_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'petstore-main-'));
      const env = { API_KEYS: API_KEY, DATA_DIR: dataDir };
      const service = await tracked(startServiceProcess({ via: 'npm', env, echo: 'none' }));
      const { origin, log } = service;
      expect(log.join('\n')).toContain('embedded database started');
      expect(await processesMentioning(dataDir)).toHaveLength(1);
      expect((await fetch(`${origin}/ready`)).status).toBe(200);

      expect(await service.stop('SIGINT')).toBe(0);
      expect(await processesMentioning(dataDir)).toEqual([]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  );

  it('starts in production without API_KEYS and no issued key, saying that no key can authenticate', async () => {
    const env = { NODE_ENV: 'production', API_KEYS: '' };
    const service = await tracked(startServiceOnRunDatabase({ dbName: uniqueDbName('nokeys'), env }));
    expect(service.log.join('\n')).toContain('no API key can authenticate');
    expect((await fetch(`${service.origin}/v1/pets`)).status).toBe(401);
    expect(await service.stop()).toBe(0);
  });
});

/** The compiled service started as `npm start` runs it, expected to end by itself: its exit and output. */
async function startExpectingExit(env: Record<string, string>) {
  const child = spawn(process.execPath, [...startFlags(), 'dist/main.js'], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', MONGODB_URI: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(deadline);
  return { code, stdout, stderr };
}

/** One plain line on stderr and no stack anywhere: what a refusal the user can fix looks like. */
function expectOnePlainLine({ code, stdout, stderr }: { code: number | null; stdout: string; stderr: string }) {
  expect(code, stderr).toBe(1);
  const lines = stderr.split('\n').filter((line) => line.length > 0);
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^petstore-gateway cannot start: /);
  expect(`${stdout}${stderr}`).not.toMatch(/\n\s+at |"stack"/);
  return lines[0] as string;
}

describe('start-up refusals', () => {
  const directories: string[] = [];
  afterEach(() => {
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  it('when variables are bad, then one line names every bad variable and the exit is 1', async () => {
    const line = expectOnePlainLine(await startExpectingExit({ PORT: 'eighty', LOG_LEVEL: 'loud', API_KEYS: 'x' }));
    expect(line).toContain('invalid configuration: ');
    expect(line).toContain('PORT: ');
    expect(line).toContain('LOG_LEVEL: ');
    expect(line).toContain('API_KEYS (entry 1): each key needs at least 16 characters');
  });

  it('when NODE_ENV=production has no MONGODB_URI and no permission for the embedded database, then one line says so', async () => {
    const line = expectOnePlainLine(await startExpectingExit({ NODE_ENV: 'production', API_KEYS: API_KEY }));
    expect(line).toContain('MONGODB_URI: must be set when NODE_ENV=production');
  });

  it('when DATA_DIR is in use by a live process, then one line names it and that process', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'petstore-refusal-'));
    directories.push(dataDir);
    // This test's own process holds the lock, as a first service would.
    writeFileSync(join(dataDir, '.lock'), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: 'earlier' }));
    const line = expectOnePlainLine(await startExpectingExit({ API_KEYS: API_KEY, DATA_DIR: dataDir }));
    expect(line).toContain(`${dataDir} is in use by process ${process.pid} on ${hostname()}`);
    expect(line).toContain('give this one another DATA_DIR');
  });

  it('when PORT is taken by another process, then one line says which variable to change', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as AddressInfo;
    try {
      const env = { API_KEYS: API_KEY, MONGODB_URI: inject('mongoUri'), MONGODB_DB: uniqueDbName('refusal') };
      const line = expectOnePlainLine(await startExpectingExit({ ...env, PORT: String(port) }));
      expect(line).toContain(`cannot listen on 127.0.0.1:${port}: another process listens there`);
      expect(line).toContain('set PORT to another port');
    } finally {
      taken.close();
    }
  });

  // `.invalid` never resolves (RFC 6761); a machine without a name server answers EAI_AGAIN instead.
  it.each([
    ['HOST', { HOST: 'petstore-no-such-host.invalid' }],
    ['METRICS_HOST', { METRICS_HOST: 'petstore-no-such-host.invalid', METRICS_PORT: '0' }],
  ])('when %s names a host that does not resolve, then one line says to check it', async (variable, hosts) => {
    const env = { API_KEYS: API_KEY, MONGODB_URI: inject('mongoUri'), MONGODB_DB: uniqueDbName('unresolved') };
    const line = expectOnePlainLine(await startExpectingExit({ ...env, ...hosts }));
    expect(line).toContain('cannot listen on petstore-no-such-host.invalid:');
    expect(line).toMatch(
      new RegExp(`that host name (resolves to no address|could not be resolved now).*: check ${variable}\\b`),
    );
  });

  it('when the start fails unexpectedly (no database answers), then the JSON log keeps the stack', async () => {
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    await new Promise((closedDone) => closed.close(closedDone));
    const exited = await startExpectingExit({ API_KEYS: API_KEY, MONGODB_URI: `mongodb://127.0.0.1:${port}` });
    expect(exited.code).toBe(1);
    expect(exited.stderr).toBe('');
    const fatal = exited.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; err?: { stack?: string } })
      .find((entry) => entry.level === 60);
    expect(fatal?.err?.stack).toMatch(/\n\s+at /);
  });
});
