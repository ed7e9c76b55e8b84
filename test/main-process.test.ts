import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { API_KEY, uniqueDbName } from './support/test-server.ts';

// Every service a test starts; one a failed assertion left running is killed after that test.
const children = new Set<ChildProcessWithoutNullStreams>();
afterEach(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
});

function tracked(child: ChildProcessWithoutNullStreams): ChildProcessWithoutNullStreams {
  children.add(child);
  return child;
}

/** `npm start` itself, as an operator runs it: npm, then the compiled service it execs. */
function npmStart(env: Record<string, string>): ChildProcessWithoutNullStreams {
  return tracked(
    spawn('npm', ['start', '--silent'], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: 'pipe' }),
  );
}

/** The compiled service alone (built by the test run's global setup), for the quick refusal cases. */
function compiledMain(env: Record<string, string>): ChildProcessWithoutNullStreams {
  return tracked(
    spawn(process.execPath, ['dist/main.js'], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: 'pipe' }),
  );
}

interface Listening {
  origin: string;
  log: string[];
}

/** Resolves once the service logs that it listens; keeps every log line for later checks. */
async function listening(child: ChildProcessWithoutNullStreams): Promise<Listening> {
  const log: string[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    log.push(line);
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { msg?: string; rest?: string };
    if (entry.msg === 'petstore-gateway is listening' && entry.rest) {
      // Keep draining stdout so the child never blocks on a full pipe.
      createInterface({ input: child.stdout }).on('line', (more) => log.push(more));
      return { origin: new URL(entry.rest).origin, log };
    }
  }
  throw new Error(`the service exited before listening:\n${log.join('\n')}`);
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
    const child = npmStart({
      PORT: '0',
      API_KEYS: API_KEY,
      MONGODB_URI: inject('mongoUri'),
      MONGODB_DB: uniqueDbName('main'),
    });
    const { origin } = await listening(child);

    expect((await fetch(`${origin}/ready`)).status).toBe(200);
    const listed = await fetch(`${origin}/v1/pets`, {
      headers: { Authorization: `Bearer ${API_KEY}`, 'X-Request-Id': 'trace-42' },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-request-id')).toBe('trace-42');
    expect((await fetch(`${origin}/health`)).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await processesMentioning('dist/main.js')).not.toHaveLength(0);

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    await expect(fetch(`${origin}/health`)).rejects.toThrow();
  });

  it.skipIf(!EMBEDDED)(
    'stops its embedded database too on SIGINT, leaving no process behind',
    { timeout: 90_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'petstore-main-'));
      const env: Record<string, string> = { PORT: '0', API_KEYS: API_KEY, DATA_DIR: dataDir };
      const child = npmStart(env);
      const { origin, log } = await listening(child);
      expect(log.join('\n')).toContain('embedded database started');
      expect(await processesMentioning(dataDir)).toHaveLength(1);
      expect((await fetch(`${origin}/ready`)).status).toBe(200);

      child.kill('SIGINT');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      expect(await processesMentioning(dataDir)).toEqual([]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  );

  it('refuses to start with bad configuration, naming every bad variable', async () => {
    const child = compiledMain({ PORT: 'eighty', NODE_ENV: 'production', API_KEYS: '', LOG_LEVEL: 'loud' });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr).toContain('PORT');
    expect(stderr).toContain('LOG_LEVEL');
  });

  it('starts in production without API_KEYS and no issued key, saying that no key can authenticate', async () => {
    const child = compiledMain({
      NODE_ENV: 'production',
      API_KEYS: '',
      PORT: '0',
      MONGODB_URI: inject('mongoUri'),
      MONGODB_DB: uniqueDbName('nokeys'),
    });
    const { origin, log } = await listening(child);
    expect(log.join('\n')).toContain('no API key can authenticate');
    expect((await fetch(`${origin}/v1/pets`)).status).toBe(401);
    child.kill('SIGTERM');
    expect((await once(child, 'exit'))[0]).toBe(0);
  });
});
