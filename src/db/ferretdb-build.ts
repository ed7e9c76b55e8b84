import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

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
