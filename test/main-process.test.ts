import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, inject, it } from 'vitest';
import { API_KEY, uniqueDbName } from './support/test-server.ts';

const TSX = 'node_modules/.bin/tsx';

function startMain(env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(TSX, ['src/main.ts'], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: 'pipe' });
}

/** Resolves with the REST base URL once main logs that it listens. */
async function listeningUrl(child: ChildProcessWithoutNullStreams): Promise<string> {
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as { msg?: string; rest?: string };
    if (entry.msg === 'petstore-gateway is listening' && entry.rest) return new URL(entry.rest).origin;
  }
  throw new Error('main exited before listening');
}

describe('npm start (src/main.ts)', () => {
  it('serves with X-Request-Id, answers /ready, and exits 0 on SIGTERM', async () => {
    const child = startMain({ PORT: '0', API_KEYS: API_KEY, MONGODB_URI: inject('mongoUri'), MONGODB_DB: uniqueDbName('main') });
    const origin = await listeningUrl(child);

    const ready = await fetch(`${origin}/ready`);
    expect(ready.status).toBe(200);
    const listed = await fetch(`${origin}/v1/pets`, { headers: { Authorization: `Bearer ${API_KEY}`, 'X-Request-Id': 'trace-42' } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-request-id')).toBe('trace-42');
    expect((await fetch(`${origin}/health`)).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('refuses to start with bad configuration, naming every bad variable', async () => {
    const child = startMain({ PORT: 'eighty', NODE_ENV: 'production', API_KEYS: '', LOG_LEVEL: 'loud' });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr).toContain('PORT');
    expect(stderr).toContain('LOG_LEVEL');
  });

  it('refuses production without API keys', async () => {
    const child = startMain({ NODE_ENV: 'production', API_KEYS: '', MONGODB_URI: inject('mongoUri') });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr).toContain('API_KEYS: required when NODE_ENV=production');
  });
});
