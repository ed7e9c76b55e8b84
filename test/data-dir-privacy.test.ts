import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NoEmbeddedDatabaseError, startEmbeddedDatabase } from '../src/db/embedded.ts';
import { connectDatabase } from '../src/db/mongo.ts';
import { runKeys } from './support/cli-command.ts';
import { createPetAt } from './support/create-pet-at.ts';
import { ServiceExitedError, startServiceProcess } from './support/service-process.ts';
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

/** The socket a `mongodb://<encoded path>/` URI names. */
const socketOf = (uri: string) => decodeURIComponent(/^mongodb:\/\/([^/]+)\/$/.exec(uri)?.[1] ?? '');

/** No TCP port is open by the FerretDB serving `dataDir`: none another local user could reach. */
function expectNoTcpListener(dataDir: string) {
  const pid = pidServing(dataDir);
  expect(pid).toBeGreaterThan(0);
  expect(execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })).not.toContain(`pid=${pid},`);
}

/** The user `nobody`: another user of this machine, as far as the service is concerned. */
const NOBODY = 65534;

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
      expectNoTcpListener(dataDir);
      // The published address, for `npm run keys` beside the service, is the socket too.
      expect(JSON.parse(readFileSync(join(dataDir, '.embedded.json'), 'utf8')).uri).toBe(database.uri);
    } finally {
      await database.stop();
    }
  });

  it('when DATA_DIR is too long for a socket path, then the socket is in a private temporary directory of its own', async () => {
    const dataDir = join(newDataDirPath(), 'a'.repeat(100));
    const warnings: string[] = [];
    const database = await startEmbeddedDatabase({ dataDir, log: () => {}, warn: (line) => warnings.push(line) });
    const socket = socketOf(database.uri);
    try {
      expect(dirname(dirname(socket))).toBe(tmpdir());
      expect(basename(dirname(socket))).toMatch(/^petstore-ferretdb-/);
      expect(modeOf(dirname(socket)).toString(8)).toBe('700');
      expect(statSync(socket).isSocket()).toBe(true);
      expectNoTcpListener(dataDir);
      expect(warnings).toEqual([]);
      expect(JSON.parse(readFileSync(join(dataDir, '.embedded.json'), 'utf8')).uri).toBe(database.uri);

      // `npm run keys` beside the service finds it through the published address.
      const listed = await runKeys(['list'], { DATA_DIR: dataDir });
      expect(listed.stderr).toContain(`of process ${process.pid} on ${dataDir}`);
      expect({ code: listed.code, stdout: listed.stdout }).toEqual({ code: 0, stdout: 'No issued keys.\n' });
    } finally {
      await database.stop();
    }
    expect(existsSync(dirname(socket))).toBe(false);
  });

  it("when a service on a long DATA_DIR was killed, then the next start removes its socket's directory", async () => {
    const dataDir = join(newDataDirPath(), 'b'.repeat(100));
    const service = await startServiceProcess({
      via: 'node',
      echo: 'none',
      env: { API_KEYS: API_KEY, DATA_DIR: dataDir },
    });
    const abandoned = dirname(socketOf(JSON.parse(readFileSync(join(dataDir, '.embedded.json'), 'utf8')).uri));
    const exited = once(service.child, 'exit');
    service.kill();
    await exited;
    expect(existsSync(abandoned)).toBe(true);

    const next = await startEmbeddedDatabase({ dataDir, log: () => {} });
    try {
      expect(existsSync(abandoned)).toBe(false);
      expect(dirname(socketOf(next.uri))).not.toBe(abandoned);
    } finally {
      await next.stop();
    }
  });

  it('when DATA_DIR is a symbolic link to a private directory, then it starts without tightening anything', async () => {
    const parent = dirname(newDataDirPath());
    const real = join(parent, 'real');
    mkdirSync(real, { mode: 0o700 });
    const dataDir = join(parent, 'link');
    symlinkSync(real, dataDir);
    const warnings: string[] = [];
    const database = await startEmbeddedDatabase({ dataDir, log: () => {}, warn: (line) => warnings.push(line) });
    try {
      expect(warnings).toEqual([]);
      expect(lstatSync(dataDir).isSymbolicLink()).toBe(true);
      expect(modeOf(real).toString(8)).toBe('700');
    } finally {
      await database.stop();
    }
  });

  it('when a symbolic link inside DATA_DIR points at an open file elsewhere, then that file is left alone', async () => {
    const dataDir = newDataDirPath();
    mkdirSync(dataDir, { mode: 0o700 });
    const elsewhere = join(dirname(dataDir), 'shared.txt');
    writeFileSync(elsewhere, "not the database's");
    chmodSync(elsewhere, 0o644);
    symlinkSync(elsewhere, join(dataDir, 'planted'));
    const database = await startEmbeddedDatabase({ dataDir, log: () => {} });
    await database.stop();
    expect(modeOf(elsewhere).toString(8)).toBe('644');
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

describe('a DATA_DIR that is not ours to make private', () => {
  it('when another user owns DATA_DIR and leaves it open, then the service and the CLI refuse it, saying why', async () => {
    const dataDir = newDataDirPath();
    mkdirSync(dataDir);
    chownSync(dataDir, NOBODY, NOBODY);
    chmodSync(dataDir, 0o777);
    const refused = await startServiceProcess({
      via: 'node',
      echo: 'none',
      env: { API_KEYS: API_KEY, DATA_DIR: dataDir },
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceExitedError);
    expect((refused as ServiceExitedError).code).toBe(1);
    const message = `other users of this machine can read or write ${dataDir} (owner uid ${NOBODY}, mode 777)`;
    expect((refused as ServiceExitedError).log.join('\n')).toContain(message);

    const listed = await runKeys(['list'], { DATA_DIR: dataDir });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(message);
    expect(listed.stderr).toContain('does not own and cannot make private');
    // Refused before anything was written or changed.
    expect(readdirSync(dataDir)).toEqual([]);
    expect(modeOf(dataDir).toString(8)).toBe('777');
  });

  it('when another user owns an open file inside DATA_DIR, then the embedded database refuses to start', async () => {
    const dataDir = newDataDirPath();
    mkdirSync(dataDir, { mode: 0o700 });
    const planted = join(dataDir, 'petstore.sqlite');
    writeFileSync(planted, '');
    chownSync(planted, NOBODY, NOBODY);
    chmodSync(planted, 0o666);
    const refused = await startEmbeddedDatabase({ dataDir, log: () => {} }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NoEmbeddedDatabaseError);
    expect((refused as Error).message).toContain(`${planted} (owner uid ${NOBODY}, mode 666)`);
    expect(existsSync(join(dataDir, '.lock'))).toBe(false);
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
      await createPetAt(service.origin, AUTH, 'Allowed');
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
