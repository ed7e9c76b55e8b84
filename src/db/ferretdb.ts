import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { EmbeddedListener } from './embedded-address.ts';
import { PRIVATE_UMASK } from './private-directory.ts';

// FerretDB: built once from tools/ferretdb, then run as a private child process, ready when it says so.

const FERRETDB_SOURCE = fileURLToPath(new URL('../../tools/ferretdb/', import.meta.url));

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
  // Concurrent builds each write their own file; the rename makes whichever finishes last win whole.
  const partial = `${binary}.${process.pid}.partial`;
  log('building the embedded database (FerretDB v1.24, SQLite backend); the first build takes a minute or two');
  const started = Date.now();
  const child = spawn('go', ['build', '-v', '-trimpath', '-o', partial, '.'], {
    cwd: FERRETDB_SOURCE,
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  let built = 0;
  // `go build -v` names each package as it compiles: a cheap, honest progress signal.
  createInterface({ input: child.stderr }).on('line', (line) => {
    built += 1;
    if (built % 25 === 0 || /^(go: |#|.*error)/.test(line)) log(`  ${built} packages compiled (${line})`);
  });
  const code = await new Promise<number | null>((done, fail) => {
    child.once('error', fail);
    child.once('close', done);
  }).catch((error: unknown) => {
    throw new Error(`cannot run go build: ${(error as Error).message}`);
  });
  if (code !== 0) {
    rmSync(partial, { force: true });
    throw new Error(`go build of the embedded database failed with exit code ${code}`);
  }
  renameSync(partial, binary);
  log(`embedded database built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return binary;
}

const READY_TIMEOUT_MS = 30_000;

/** The running child; embedded.ts says which kind of server it is. */
export interface EmbeddedProcess {
  uri: string;
  stop(): Promise<void>;
  /** Called if the server dies while we still use it, so the service can exit instead of 503-ing forever. */
  onUnexpectedExit(listener: (code: number | null) => void): void;
}

/** Stops the child; whoever asked for the stop is not told of the exit as "unexpected". */
function supervise(child: ChildProcess, uri: string): EmbeddedProcess {
  let stopping = false;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    uri,
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
function waitForReady(child: ChildProcess, output: NodeJS.ReadableStream, isReady: (line: string) => boolean) {
  return new Promise<void>((resolveReady, fail) => {
    const abort = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      fail(error);
    };
    const timer = setTimeout(() => abort(new Error('did not become ready in time')), READY_TIMEOUT_MS);
    child.once('error', abort);
    child.once('exit', (code) => abort(new Error(`exited early with code ${code}`)));
    createInterface({ input: output }).on('line', (line) => {
      if (!isReady(line)) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.removeAllListeners('error');
      resolveReady();
    });
  });
}

/**
 * The server's SQLite files would be created 0644 under the usual umask: this one makes them 0600. A
 * child takes the umask in force when it is spawned (a file Node's own threads create meanwhile is
 * only more private for it).
 */
function spawnPrivately(binary: string, args: string[]) {
  const umask = process.umask(PRIVATE_UMASK);
  try {
    return spawn(binary, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  } finally {
    process.umask(umask);
  }
}

export async function startFerretDb(
  binary: string,
  dataDir: string,
  listener: EmbeddedListener,
): Promise<EmbeddedProcess> {
  // It warns about every command it lacks (the driver's endSessions, say): errors are what matter.
  const args = [...listener.args, '--dir', dataDir, '--exit-with-stdin', '--log-level', 'error'];
  const child = spawnPrivately(binary, args);
  await waitForReady(child, child.stdout, (line) => /^ready \S/.test(line));
  return supervise(child, listener.uri);
}
