import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** A MongoDB-compatible server this process started and must stop. */
export interface EmbeddedDatabase {
  uri: string;
  kind: 'ferretdb' | 'mongod' | 'mongodb-memory-server';
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** Progress lines for people watching a first build. */
  log: (message: string) => void;
}

const FERRETDB_SOURCE = fileURLToPath(new URL('../../tools/ferretdb/', import.meta.url));
const READY_TIMEOUT_MS = 30_000;

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
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The binary is keyed by a hash of its sources, so editing them rebuilds and nothing stale runs. */
export function ferretDbBinaryPath(): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(FERRETDB_SOURCE, file)));
  return join(FERRETDB_SOURCE, 'bin', `ferretdb-${hash.digest('hex').slice(0, 12)}`);
}

/** Builds FerretDB from the Go module proxy once; later calls find the cached binary. */
export async function buildFerretDb(log: (message: string) => void): Promise<string> {
  const binary = ferretDbBinaryPath();
  if (existsSync(binary)) return binary;
  mkdirSync(join(FERRETDB_SOURCE, 'bin'), { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  log('building the embedded database (FerretDB v1.24, SQLite backend); the first build takes a minute or two');
  const started = Date.now();
  const child = spawn('go', ['build', '-v', '-trimpath', '-o', partial, '.'], {
    cwd: FERRETDB_SOURCE,
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  let built = 0;
  // `go build -v` names each package as it compiles: a cheap, honest progress signal.
  createInterface({ input: child.stderr! }).on('line', (line) => {
    built += 1;
    if (built % 25 === 0 || /^(go: |#|.*error)/.test(line)) log(`  ${built} packages compiled (${line})`);
  });
  const code = await new Promise<number | null>((done) => child.on('close', done));
  if (code !== 0) throw new Error(`go build of the embedded database failed with exit code ${code}`);
  renameSync(partial, binary);
  log(`embedded database built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return binary;
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once('exit', () => done()));
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = waitForExit(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

async function startFerretDb(binary: string, dataDir: string): Promise<EmbeddedDatabase> {
  const port = await freePort();
  // FerretDB warns about every command it lacks (the driver's endSessions, say): errors are what matter here.
  const args = ['--listen', `127.0.0.1:${port}`, '--dir', dataDir, '--exit-with-stdin', '--log-level', 'error'];
  const child = spawn(binary, args, {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const uri = await new Promise<string>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error('FerretDB did not become ready in time')), READY_TIMEOUT_MS);
    child.once('exit', (code) => fail(new Error(`FerretDB exited early with code ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^ready (\S+)/.exec(line);
      if (match?.[1]) {
        clearTimeout(timer);
        ready(match[1]);
      }
    });
  });
  return { uri, kind: 'ferretdb', stop: () => stopChild(child) };
}

async function startMongod(dataDir: string): Promise<EmbeddedDatabase> {
  const port = await freePort();
  const dbPath = join(dataDir, 'mongod');
  mkdirSync(dbPath, { recursive: true });
  const child = spawn('mongod', ['--dbpath', dbPath, '--port', String(port), '--bind_ip', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error('mongod did not become ready in time')), READY_TIMEOUT_MS);
    child.once('exit', (code) => fail(new Error(`mongod exited early with code ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('Waiting for connections')) {
        clearTimeout(timer);
        ready();
      }
    });
  });
  return { uri: `mongodb://127.0.0.1:${port}/`, kind: 'mongod', stop: () => stopChild(child) };
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
  return { uri: server.getUri(), kind: 'mongodb-memory-server', stop: async () => void (await server.stop()) };
}

/** FerretDB when Go is here, else `mongod` on PATH, else mongodb-memory-server, else a clear error. */
export async function startEmbeddedDatabase({ dataDir, log }: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const directory = resolve(dataDir);
  mkdirSync(directory, { recursive: true });
  const reasons: string[] = [];
  const cached = existsSync(ferretDbBinaryPath());
  if (cached || commandExists('go', ['version'])) {
    try {
      return await startFerretDb(await buildFerretDb(log), directory);
    } catch (error) {
      reasons.push(`FerretDB: ${(error as Error).message}`);
    }
  } else {
    reasons.push('FerretDB: Go is not installed, so it cannot be built');
  }
  if (commandExists('mongod', ['--version'])) {
    try {
      return await startMongod(directory);
    } catch (error) {
      reasons.push(`mongod: ${(error as Error).message}`);
    }
  } else {
    reasons.push('mongod: not on PATH');
  }
  try {
    return await startMemoryServer(directory);
  } catch (error) {
    reasons.push(`mongodb-memory-server: ${(error as Error).message}`);
  }
  throw new NoEmbeddedDatabaseError(reasons);
}
