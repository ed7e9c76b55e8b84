import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { lockDataDir } from './data-dir-lock.ts';
import { publishEmbeddedAddress } from './embedded-address.ts';
import { buildFerretDb, ferretDbBinaryPath } from './ferretdb-build.ts';

export type EmbeddedKind = 'ferretdb' | 'mongod' | 'mongodb-memory-server';

/** A MongoDB-compatible server this process started and must stop. */
export interface EmbeddedDatabase {
  uri: string;
  kind: EmbeddedKind;
  stop(): Promise<void>;
  /** Called if the server dies while we still use it, so the service can exit instead of 503-ing forever. */
  onUnexpectedExit(listener: (code: number | null) => void): void;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** Progress lines for people watching a first build. */
  log: (message: string) => void;
}

const READY_TIMEOUT_MS = 30_000;
/** Which server wrote DATA_DIR: starting another over it would look like every pet vanished. */
const BACKEND_MARKER = '.backend';

export class NoEmbeddedDatabaseError extends Error {
  constructor(reasons: string[]) {
    super(
      [
        'No MongoDB-compatible database could be started here:',
        ...reasons.map((reason) => `  - ${reason}`),
        'Install Go (to build the embedded FerretDB), or set MONGODB_URI, e.g.',
        '  MONGODB_URI=mongodb://127.0.0.1:27017 npm start',
      ].join('\n'),
    );
    this.name = 'NoEmbeddedDatabaseError';
  }
}

function commandExists(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Stops the child; whoever asked for the stop is not told of the exit as "unexpected". */
function supervise(child: ChildProcess, kind: EmbeddedKind, uri: string): EmbeddedDatabase {
  let stopping = false;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    uri,
    kind,
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
    onUnexpectedExit(listener) {
      child.once('exit', (code) => {
        if (!stopping) listener(code);
      });
    },
  };
}

/** Waits for the child's readiness line; on failure or timeout the child is killed, never left behind. */
async function waitForReady(
  child: ChildProcess,
  output: NodeJS.ReadableStream,
  ready: (line: string) => string | null,
): Promise<string> {
  return new Promise<string>((resolveReady, fail) => {
    const abort = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      fail(error);
    };
    const timer = setTimeout(() => abort(new Error('did not become ready in time')), READY_TIMEOUT_MS);
    child.once('error', abort);
    child.once('exit', (code) => abort(new Error(`exited early with code ${code}`)));
    createInterface({ input: output }).on('line', (line) => {
      const value = ready(line);
      if (value !== null) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        child.removeAllListeners('error');
        resolveReady(value);
      }
    });
  });
}

async function startFerretDb(binary: string, dataDir: string): Promise<EmbeddedDatabase> {
  // Port 0: FerretDB binds a free port itself and reports it, so no other process can take it first.
  // It warns about every command it lacks (the driver's endSessions, say): errors are what matter.
  const args = ['--listen', '127.0.0.1:0', '--dir', dataDir, '--exit-with-stdin', '--log-level', 'error'];
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const uri = await waitForReady(child, child.stdout, (line) => /^ready (\S+)/.exec(line)?.[1] ?? null);
  return supervise(child, 'ferretdb', uri);
}

async function startMongod(dataDir: string): Promise<EmbeddedDatabase> {
  const port = await freePort();
  const dbPath = join(dataDir, 'mongod');
  mkdirSync(dbPath, { recursive: true });
  const child = spawn('mongod', ['--dbpath', dbPath, '--port', String(port), '--bind_ip', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForReady(child, child.stdout, (line) => (line.includes('Waiting for connections') ? line : null));
  return supervise(child, 'mongod', `mongodb://127.0.0.1:${port}/`);
}

async function startMemoryServer(dataDir: string): Promise<EmbeddedDatabase> {
  // Optional and not a dependency: only used where a developer installed it themselves.
  const moduleName = 'mongodb-memory-server';
  const { MongoMemoryServer } = (await import(moduleName)) as {
    MongoMemoryServer: { create(options: object): Promise<{ getUri(): string; stop(): Promise<unknown> }> };
  };
  const dbPath = join(dataDir, 'memory-server');
  mkdirSync(dbPath, { recursive: true });
  const server = await MongoMemoryServer.create({ instance: { dbPath, storageEngine: 'wiredTiger' } });
  return {
    uri: server.getUri(),
    kind: 'mongodb-memory-server',
    stop: async () => void (await server.stop()),
    onUnexpectedExit: () => {},
  };
}

function readMarker(directory: string): string | undefined {
  const file = join(directory, BACKEND_MARKER);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/**
 * FerretDB when Go is here, else `mongod` on PATH, else mongodb-memory-server, else a clear error.
 * Once ready, its URI is published in DATA_DIR (embedded-address.ts) for tools run beside the service.
 */
export async function startEmbeddedDatabase({ dataDir, log }: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const directory = resolve(dataDir);
  mkdirSync(directory, { recursive: true });
  // One owner per data directory: a second server over the same files would corrupt them.
  const unlock = lockDataDir(directory);
  let unpublish = () => {};
  // However this process ends (even interrupted while starting), the directory is free for the next owner.
  const release = () => {
    process.off('exit', release);
    unpublish();
    unlock();
  };
  process.once('exit', release);
  try {
    const database = await startFirstAvailable(directory, log);
    try {
      unpublish = publishEmbeddedAddress(directory, { pid: process.pid, kind: database.kind, uri: database.uri });
    } catch (error) {
      await database.stop();
      throw error;
    }
    return {
      ...database,
      // Unpublished first: nobody is sent to a database that is going away.
      stop: () => {
        unpublish();
        return database.stop().finally(release);
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

async function startFirstAvailable(directory: string, log: (message: string) => void): Promise<EmbeddedDatabase> {
  const marker = readMarker(directory);
  const reasons: string[] = [];
  const candidates: { kind: EmbeddedKind; available: () => string | null; start: () => Promise<EmbeddedDatabase> }[] = [
    {
      kind: 'ferretdb',
      available: () =>
        existsSync(ferretDbBinaryPath()) || commandExists('go', ['version'])
          ? null
          : 'Go is not installed, so it cannot be built',
      start: async () => startFerretDb(await buildFerretDb(log), directory),
    },
    {
      kind: 'mongod',
      available: () => (commandExists('mongod', ['--version']) ? null : 'not on PATH'),
      start: () => startMongod(directory),
    },
    { kind: 'mongodb-memory-server', available: () => null, start: () => startMemoryServer(directory) },
  ];
  for (const candidate of candidates) {
    const unavailable =
      marker && marker !== candidate.kind
        ? `${directory} holds ${marker} data; not starting another server over it`
        : candidate.available();
    if (unavailable) {
      reasons.push(`${candidate.kind}: ${unavailable}`);
      continue;
    }
    try {
      const database = await candidate.start();
      writeFileSync(join(directory, BACKEND_MARKER), `${candidate.kind}\n`);
      return database;
    } catch (error) {
      reasons.push(`${candidate.kind}: ${(error as Error).message}`);
    }
  }
  throw new NoEmbeddedDatabaseError(reasons);
}
