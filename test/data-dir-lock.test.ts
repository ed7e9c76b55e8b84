import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { ServiceExitedError, startServiceProcess } from './support/service-process.ts';

const LOCK_MODULE = fileURLToPath(new URL('../src/db/data-dir-lock.ts', import.meta.url));
const directories: string[] = [];

function freshDataDir(): string {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-lock-'));
  directories.push(directory);
  return directory;
}

/** A pid that was just in use and is not any more: what a killed service leaves in its lock. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

/** What a killed service leaves behind: a lock naming a process of this host that is gone. */
function dataDirWithStaleLock(): string {
  const dataDir = freshDataDir();
  writeFileSync(join(dataDir, '.lock'), JSON.stringify({ pid: deadPid(), host: hostname(), startedAt: 'then' }));
  return dataDir;
}

afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('one owner per data directory', () => {
  it('when a second embedded database starts on the same DATA_DIR, then it refuses, naming the owner', async () => {
    const dataDir = freshDataDir();
    const first = await startEmbeddedDatabase({ dataDir, log: () => {} });
    try {
      await expect(startEmbeddedDatabase({ dataDir, log: () => {} })).rejects.toThrow(
        new RegExp(`is in use by process ${process.pid}`),
      );
    } finally {
      await first.stop();
    }
    // Stopping releases the directory for the next owner.
    const next = await startEmbeddedDatabase({ dataDir, log: () => {} });
    await next.stop();
  });

  it('when a second service starts on the same DATA_DIR, then it exits 1 with a clear message', async () => {
    const dataDir = freshDataDir();
    const first = await startEmbeddedDatabase({ dataDir, log: () => {} });
    try {
      const second = await startServiceProcess({ via: 'node', env: { DATA_DIR: dataDir } }).catch((error) => error);
      expect(second).toBeInstanceOf(ServiceExitedError);
      expect(second.code).toBe(1);
      const output = second.log.join('\n');
      expect(output).toContain('is in use by process');
      expect(output).toContain('give this one another DATA_DIR');
      // Said as one plain line, without a stack (test/main-process.test.ts checks the streams apart).
      expect(second.log).toContainEqual(
        expect.stringMatching(/^petstore-gateway cannot start: .* is in use by process/),
      );
      expect(output).not.toContain('"stack"');
    } finally {
      await first.stop();
    }
  });

  it('when the lock was left by a killed process, then the next start takes it over', async () => {
    const dataDir = dataDirWithStaleLock();
    const database = await startEmbeddedDatabase({ dataDir, log: () => {} });
    expect(JSON.parse(readFileSync(join(dataDir, '.lock'), 'utf8')).pid).toBe(process.pid);
    await database.stop();
  });

  it('when several processes race to take over one stale lock, then exactly one wins', async () => {
    const dataDir = dataDirWithStaleLock();
    // Each racer holds what it won for a moment, so the others find a live owner.
    const script = `import { lockDataDir } from ${JSON.stringify(LOCK_MODULE)};
      try { lockDataDir(${JSON.stringify(dataDir)}); console.log('won'); await new Promise((r) => setTimeout(r, 1500)); }
      catch (error) { console.log(error.name); }`;
    const racers = Array.from({ length: 4 }, () =>
      spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    const outcomes = await Promise.all(
      racers.map(async (racer) => {
        let out = '';
        racer.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        await once(racer, 'exit');
        return out.trim();
      }),
    );
    expect(outcomes.filter((outcome) => outcome === 'won')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'DataDirInUseError')).toHaveLength(3);
  });
});
