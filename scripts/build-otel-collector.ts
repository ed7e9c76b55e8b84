// Builds (or finds cached) the OpenTelemetry Collector of tools/otelcol, which the tracing tests send
// their spans to, as the embedded FerretDB is built (src/db/ferretdb.ts): from the Go module
// proxy, keyed by a hash of its sources, so an unchanged tree never rebuilds and an edited one never
// runs stale. Run directly (CI's "otel collector build" step) it prints where the binary is.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { withBuildLockAsync } from './build-lock.js';

const SOURCE = fileURLToPath(new URL('../tools/otelcol/', import.meta.url));
const BIN = join(SOURCE, 'bin');
const NAME = 'otelcol';

export interface BuildOptions {
  /** Progress lines for people watching a first build. */
  log?: (message: string) => void;
  /** Gives up (killing `go build`) after this long, waiting for another process's build included. */
  timeoutMs?: number;
}

/** go.mod, go.sum and every .go file: what the binary is made of (the Go toolchain aside). */
function sources(): string[] {
  const go = readdirSync(SOURCE).filter((name) => name.endsWith('.go'));
  return ['go.mod', 'go.sum', ...go.sort()];
}

/** The binary for the sources as they are now: `tools/otelcol/bin/otelcol-<hash of the sources>`. */
export function otelCollectorBinaryPath(): string {
  const hash = createHash('sha256');
  for (const file of sources()) {
    const content = readFileSync(join(SOURCE, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return join(BIN, `${NAME}-${hash.digest('hex').slice(0, 12)}`);
}

/** Leaves only the current binary: each source change would otherwise leave ~30 MB behind. */
function pruneOthers(keep: string): void {
  for (const name of readdirSync(BIN)) {
    if (name.startsWith(`${NAME}-`) && !name.endsWith('.partial') && join(BIN, name) !== keep)
      rmSync(join(BIN, name), { force: true });
  }
}

async function goBuild(output: string, log: (message: string) => void, deadline: number): Promise<void> {
  // -s -w: no symbol table or DWARF (a smaller binary, a shorter link); -buildvcs=false: no git needed.
  const args = ['build', '-v', '-trimpath', '-buildvcs=false', '-ldflags=-s -w', '-o', output, '.'];
  const child = spawn('go', args, { cwd: SOURCE, stdio: ['ignore', 'inherit', 'pipe'] });
  let built = 0;
  const tail: string[] = [];
  // `go build -v` names each package as it compiles: a cheap, honest progress signal.
  createInterface({ input: child.stderr }).on('line', (line) => {
    built += 1;
    tail.push(line);
    if (tail.length > 30) tail.shift();
    if (built % 50 === 0 || /^(go: |#)|: error/.test(line)) log(`  ${built} packages compiled (${line})`);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), Math.max(0, deadline - Date.now()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done, fail) => {
    child.once('error', fail);
    child.once('close', (exitCode, exitSignal) => done([exitCode, exitSignal]));
  })
    .catch((error: unknown) => {
      throw new Error(`cannot run go build: ${(error as Error).message} (is Go installed?)`);
    })
    .finally(() => clearTimeout(timer));
  if (code === 0) return;
  rmSync(output, { force: true });
  const why = signal === 'SIGKILL' && Date.now() >= deadline ? 'ran past its deadline' : `failed (${code ?? signal})`;
  throw new Error(`go build of the OpenTelemetry Collector (tools/otelcol) ${why}:\n${tail.join('\n')}`);
}

let pending: Promise<string> | undefined;

/**
 * The Collector binary, built from the Go module proxy when missing or when its sources changed (about
 * two minutes on 2 cores with a cold Go build cache, seconds with a warm one); otherwise only a hash of
 * four small files. Concurrent callers, in this process or others, share one build.
 */
export function buildOtelCollector(options: BuildOptions = {}): Promise<string> {
  const binary = otelCollectorBinaryPath();
  if (existsSync(binary)) return Promise.resolve(binary);
  pending ??= build(binary, options).finally(() => {
    pending = undefined;
  });
  return pending;
}

async function build(binary: string, { log = () => {}, timeoutMs = 600_000 }: BuildOptions): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  // One build at a time across processes (test files run in parallel workers), with build.js's lock.
  return withBuildLockAsync(BIN, deadline, async () => {
    // Another process may have built it while we waited for the lock.
    if (existsSync(binary)) return binary;
    log(
      'building the OpenTelemetry Collector (tools/otelcol: OTLP receiver, debug exporter); a minute or two the first time',
    );
    const started = Date.now();
    const partial = `${binary}.${process.pid}.partial`;
    await goBuild(partial, log, deadline);
    renameSync(partial, binary);
    pruneOthers(binary);
    log(`OpenTelemetry Collector built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return binary;
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  const binary = await buildOtelCollector({ log: (message) => console.log(message) });
  console.log(`otel collector ready: ${binary} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
