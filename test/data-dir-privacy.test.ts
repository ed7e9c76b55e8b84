import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceExitedError, startServiceProcess } from '../scripts/service-process.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { connectDatabase } from '../src/db/mongo.ts';
import { API_KEY, AUTH } from './support/test-server.ts';

const parents: string[] = [];
afterEach(() => {
  for (const parent of parents.splice(0)) rmSync(parent, { recursive: true, force: true });
});

/** A DATA_DIR path that does not exist yet, as on a first `npm start`. */
function newDataDirPath(): string {
  const parent = mkdtempSync(join(tmpdir(), 'petstore-private-'));
  parents.push(parent);
  return join(parent, 'data');
}

/** The pid of the FerretDB serving `dataDir` (its command line names it). */
function pidServing(dataDir: string): number {
  const table = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  const line = table.split('\n').find((row) => row.includes(`--dir ${dataDir}`));
  return Number.parseInt(line?.trim() ?? '', 10);
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** Every entry of DATA_DIR with its mode, in octal: `{ '.lock': '600', ... }`. */
function modesIn(directory: string): Record<string, string> {
  return Object.fromEntries(readdirSync(directory).map((name) => [name, modeOf(join(directory, name)).toString(8)]));
}

describe('the embedded database is private to its owner', () => {
  it('when it starts on a new DATA_DIR and stores data, then the directory is 0700 and every file in it 0600', async () => {
    const dataDir = newDataDirPath();
    const database = await startEmbeddedDatabase({ dataDir, log: () => {} });
    try {
      const client = await connectDatabase(database.uri, 'privacy');
      await client.db.collection('pets').insertOne({ _id: 1 as never, name: 'Private' });
      await client.close();

      expect(modeOf(dataDir).toString(8)).toBe('700');
      const modes = modesIn(dataDir);
      console.info(`DATA_DIR after a start and a write: ${JSON.stringify(modes)}`);
      // The lock, the published address, the backend marker and FerretDB's own SQLite files.
      const { 'ferretdb.sock': socketMode, ...files } = modes;
      expect(Object.keys(files)).toEqual(expect.arrayContaining(['.lock', '.embedded.json', '.backend']));
      expect(Object.keys(files).some((name) => name.startsWith('privacy'))).toBe(true);
      expect(
        Object.values(files).every((mode) => mode === '600'),
        JSON.stringify(modes),
      ).toBe(true);
      expect(socketMode).toBe('700');
    } finally {
      await database.stop();
    }
  });

  it('then it listens on a socket inside DATA_DIR only: no TCP port another local user could reach', async () => {
    const dataDir = newDataDirPath();
    // What a server killed with SIGKILL leaves: its socket file, which would stop the next one binding.
    mkdirSync(dataDir, { mode: 0o700 });
    writeFileSync(join(dataDir, 'ferretdb.sock'), '');
    const database = await startEmbeddedDatabase({ dataDir, log: () => {} });
    try {
      const socket = join(dataDir, 'ferretdb.sock');
      expect(database.uri).toBe(`mongodb://${encodeURIComponent(socket)}/`);
      expect(statSync(socket).isSocket()).toBe(true);
      const listening = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' });
      expect(listening).not.toContain(`pid=${pidServing(dataDir)},`);
      // The published address, for `npm run keys` beside the service, is the socket too.
      expect(JSON.parse(readFileSync(join(dataDir, '.embedded.json'), 'utf8')).uri).toBe(database.uri);
    } finally {
      await database.stop();
    }
  });

  it('when DATA_DIR is too long for a socket path, then it listens on a loopback port and warns', async () => {
    const dataDir = join(newDataDirPath(), 'a'.repeat(100));
    const warnings: string[] = [];
    const database = await startEmbeddedDatabase({ dataDir, log: () => {}, warn: (line) => warnings.push(line) });
    try {
      expect(database.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/$/);
      expect(warnings).toEqual([expect.stringContaining('any user of this machine can connect to it')]);
      const client = await connectDatabase(database.uri, 'long');
      expect(await client.db.command({ ping: 1 })).toMatchObject({ ok: 1 });
      await client.close();
    } finally {
      await database.stop();
    }
  });

  it('when DATA_DIR was left open by an older version, then it is made private and a warning says so', async () => {
    const dataDir = newDataDirPath();
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    // The marker an older version wrote 0644; writing it again would keep that mode.
    writeFileSync(join(dataDir, '.backend'), 'ferretdb\n');
    chmodSync(join(dataDir, '.backend'), 0o644);
    const warnings: string[] = [];
    const database = await startEmbeddedDatabase({ dataDir, log: () => {}, warn: (line) => warnings.push(line) });
    try {
      expect(modeOf(dataDir).toString(8)).toBe('700');
      expect(modeOf(join(dataDir, '.backend')).toString(8)).toBe('600');
      expect(warnings).toEqual([expect.stringContaining('was open to other users of this machine')]);
    } finally {
      await database.stop();
    }
  });
});

describe('NODE_ENV=production and the embedded database', () => {
  it('when MONGODB_URI is unset, then the service refuses to start, saying to set MONGODB_URI', async () => {
    const dataDir = newDataDirPath();
    const refused = await startServiceProcess({
      via: 'node',
      echo: 'none',
      env: { NODE_ENV: 'production', API_KEYS: API_KEY, DATA_DIR: dataDir },
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceExitedError);
    expect((refused as ServiceExitedError).code).toBe(1);
    const output = (refused as ServiceExitedError).log.join('\n');
    expect(output).toContain('MONGODB_URI: must be set when NODE_ENV=production');
    expect(output).toContain('EMBEDDED_DATABASE_IN_PRODUCTION=allow');
    // Refused before anything was started or written.
    expect(() => statSync(dataDir)).toThrow();
  });

  it('when EMBEDDED_DATABASE_IN_PRODUCTION=allow, then it starts on a private DATA_DIR and serves', async () => {
    const dataDir = newDataDirPath();
    const service = await startServiceProcess({
      via: 'node',
      echo: 'none',
      env: { NODE_ENV: 'production', EMBEDDED_DATABASE_IN_PRODUCTION: 'allow', API_KEYS: API_KEY, DATA_DIR: dataDir },
    });
    try {
      const created = await fetch(`${service.origin}/v1/pets`, {
        method: 'POST',
        headers: { ...AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Allowed', categoryId: 1 }),
      });
      expect(created.status).toBe(201);
      expect(modeOf(dataDir).toString(8)).toBe('700');
      const { 'ferretdb.sock': _socket, ...files } = modesIn(dataDir);
      expect(
        Object.values(files).every((mode) => mode === '600'),
        JSON.stringify(files),
      ).toBe(true);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});
