// Builds (or finds cached) oasdiff, the OpenAPI diff the contract gate runs (scripts/contract-gate.ts),
// as the OpenTelemetry Collector is built (scripts/build-otel-collector.ts): from the Go module proxy,
// pinned by tools/oasdiff/go.mod (a `tool` directive, so no Go source of ours), cached in
// tools/oasdiff/bin/ under a hash of go.mod and go.sum. Run directly (CI's "oasdiff build" step) it
// prints where the binary is.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { withBuildLockAsync } from './build-lock.js';

const SOURCE = fileURLToPath(new URL('../tools/oasdiff/', import.meta.url));
const BIN = join(SOURCE, 'bin');
const NAME = 'oasdiff';
const PACKAGE = 'github.com/oasdiff/oasdiff';
export const BUILD_OASDIFF_COMMAND = 'npx tsx scripts/build-oasdiff.ts';

export interface BuildOptions {
  log?: (message: string) => void;
  /** Gives up (killing `go build`) after this long, waiting for another process's build included. */
  timeoutMs?: number;
}

/** The binary for tools/oasdiff as it is now: `tools/oasdiff/bin/oasdiff-<hash of go.mod and go.sum>`. */
export function oasdiffBinaryPath(): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum']) {
    const content = readFileSync(join(SOURCE, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return join(BIN, `${NAME}-${hash.digest('hex').slice(0, 12)}`);
}

/** The version go.mod pins, stamped into the binary (`oasdiff --version` says "main" otherwise). */
function pinnedVersion(): string {
  const match = /github\.com\/oasdiff\/oasdiff (v\S+)/.exec(readFileSync(join(SOURCE, 'go.mod'), 'utf8'));
  if (!match?.[1]) throw new Error('tools/oasdiff/go.mod does not require github.com/oasdiff/oasdiff');
  return match[1];
}

function goBuild(output: string, deadline: number): Promise<void> {
  const ldflags = `-s -w -X ${PACKAGE}/build.Version=${pinnedVersion()}`;
  const args = ['build', '-trimpath', '-buildvcs=false', `-ldflags=${ldflags}`, '-o', output, PACKAGE];
  // GOFLAGS=-mod=mod: resolve from go.mod/go.sum and the module cache or proxy, never a vendor tree.
  const env = { ...process.env, GOFLAGS: `${process.env.GOFLAGS ?? ''} -mod=mod`.trim() };
  const timeout = Math.max(1, deadline - Date.now());
  return new Promise((resolve, reject) => {
    execFile('go', args, { cwd: SOURCE, env, timeout, killSignal: 'SIGKILL' }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      rmSync(output, { force: true });
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOENT' ? 'cannot run go (is Go installed?)' : error.killed ? 'ran past its deadline' : 'failed';
      reject(new Error(`go build of oasdiff (tools/oasdiff) ${why}:\n${stderr.split('\n').slice(-30).join('\n')}`));
    });
  });
}

/** Leaves only the current binary: each go.mod change would otherwise leave one behind. */
function pruneOthers(keep: string): void {
  for (const name of readdirSync(BIN)) {
    if (name.startsWith(`${NAME}-`) && !name.endsWith('.partial') && join(BIN, name) !== keep)
      rmSync(join(BIN, name), { force: true });
  }
}

/** The oasdiff binary, built when missing; concurrent callers (test workers, CI) share one build. */
export async function buildOasdiff({ log = () => {}, timeoutMs = 600_000 }: BuildOptions = {}): Promise<string> {
  const binary = oasdiffBinaryPath();
  if (existsSync(binary)) return binary;
  mkdirSync(BIN, { recursive: true });
  const deadline = Date.now() + timeoutMs;
  return withBuildLockAsync(BIN, deadline, async () => {
    if (existsSync(binary)) return binary;
    log('building oasdiff (tools/oasdiff) from the Go module proxy');
    const partial = `${binary}.${process.pid}.partial`;
    await goBuild(partial, deadline);
    renameSync(partial, binary);
    pruneOthers(binary);
    return binary;
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  const binary = await buildOasdiff({ log: (message) => console.log(message) });
  console.log(`oasdiff ready: ${binary} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
