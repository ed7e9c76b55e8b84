import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  ServiceExitedError,
  type ServiceOptions,
  type ServiceProcess,
  startServiceProcess,
} from '../scripts/service-process.ts';
import { API_KEY, uniqueDbName } from './support/test-server.ts';

// Every service a test starts; one a failed assertion left running is killed after that test.
const services = new Set<ServiceProcess>();
afterEach(() => {
  for (const service of services) service.kill();
  services.clear();
});

/** Started as an operator starts it (`via: 'npm'`: npm, then the compiled service it execs), tracked. */
async function start(via: ServiceOptions['via'], env: Record<string, string>): Promise<ServiceProcess> {
  const service = await startServiceProcess({ via, env, echo: 'none' });
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
    const service = await start('npm', {
      API_KEYS: API_KEY,
      MONGODB_URI: inject('mongoUri'),
      MONGODB_DB: uniqueDbName('main'),
    });
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
      const service = await start('npm', { API_KEYS: API_KEY, DATA_DIR: dataDir });
      const { origin, log } = service;
      expect(log.join('\n')).toContain('embedded database started');
      expect(await processesMentioning(dataDir)).toHaveLength(1);
      expect((await fetch(`${origin}/ready`)).status).toBe(200);

      expect(await service.stop('SIGINT')).toBe(0);
      expect(await processesMentioning(dataDir)).toEqual([]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  );

  it('refuses to start with bad configuration, naming every bad variable', async () => {
    const refused = start('node', { PORT: 'eighty', NODE_ENV: 'production', API_KEYS: '', LOG_LEVEL: 'loud' });
    await expect(refused).rejects.toBeInstanceOf(ServiceExitedError);
    await expect(refused).rejects.toMatchObject({ code: 1 });
    await expect(refused).rejects.toThrow('PORT');
    await expect(refused).rejects.toThrow('LOG_LEVEL');
  });

  it('starts in production without API_KEYS and no issued key, saying that no key can authenticate', async () => {
    const service = await start('node', {
      NODE_ENV: 'production',
      API_KEYS: '',
      MONGODB_URI: inject('mongoUri'),
      MONGODB_DB: uniqueDbName('nokeys'),
    });
    expect(service.log.join('\n')).toContain('no API key can authenticate');
    expect((await fetch(`${service.origin}/v1/pets`)).status).toBe(401);
    expect(await service.stop()).toBe(0);
  });
});
