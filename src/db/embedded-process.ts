import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { EmbeddedDatabase } from './embedded.ts';
import type { EmbeddedListener } from './embedded-listener.ts';
import { PRIVATE_UMASK } from './private-directory.ts';

// The FerretDB child process: started privately, ready when it says so, stopped on request.

const READY_TIMEOUT_MS = 30_000;

/** The running child; embedded.ts says which kind of server it is. */
export type EmbeddedProcess = Omit<EmbeddedDatabase, 'kind'>;

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
  await waitForReady(child, child.stdout, (line) => /^ready (\S+)/.exec(line)?.[1] ?? null);
  return supervise(child, listener.uri);
}
