// `tsx scripts/check-production-install.ts` (CI, after the build): a copy of the built tree, pruned to
// its production dependencies (`npm prune --omit=dev`), must start with `npm start` on its embedded
// FerretDB, serve REST and GraphQL, stop on SIGTERM with exit 0 and leave no process behind; `npm run
// keys` must work; no compiler, test or lint tool may be installed there; and once src/ changes,
// `npm start` must refuse in one line rather than try to build. Exits 1 on the first failure.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processesUsing } from '../test/support/process-tree.ts';
import { type ServiceProcess, startServiceProcess } from '../test/support/service-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Not part of a deployment: history, test output, local data. */
const NOT_COPIED = new Set(['.git', 'test-artifacts', '.data', '.cache']);
const TOOLS = ['typescript', 'tsx', 'vitest', '@biomejs/biome', 'vite', 'autocannon', 'supertest', 'playwright-core'];
/** Dev dependencies by name; ajv is also used at run time, under graphql-jit (fast-json-stringify). */
const NOT_DIRECT = [...TOOLS, 'ajv'];
const forbidden = (names: string[], name: string) => names.includes(name) || name.startsWith('@graphql-codegen/');
const COMMAND_DEADLINE_MS = 180_000;

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: COMMAND_DEADLINE_MS });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${result.status ?? result.signal}):\n${result.stderr}`);
  }
  return result.stdout;
}

function step<T>(name: string, work: () => T): T {
  const started = performance.now();
  const result = work();
  console.log(`production install: ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  return result;
}

interface Tree {
  dependencies?: Record<string, Tree>;
}

function installedNames(tree: Tree, into = new Set<string>()): Set<string> {
  for (const [name, below] of Object.entries(tree.dependencies ?? {})) {
    into.add(name);
    installedNames(below, into);
  }
  return into;
}

/** `npm ls --omit=dev` must succeed (nothing missing) and name no tool, directly or below. */
function checkDependencies(dir: string): void {
  const direct = Object.keys((JSON.parse(run('npm', ['ls', '--omit=dev', '--json'], dir)) as Tree).dependencies ?? {});
  const all = installedNames(JSON.parse(run('npm', ['ls', '--omit=dev', '--all', '--json'], dir)) as Tree);
  const wrong = [
    ...direct.filter((name) => forbidden(NOT_DIRECT, name)),
    ...[...all].filter((name) => forbidden(TOOLS, name)),
  ];
  if (wrong.length > 0) throw new Error(`installed in production: ${[...new Set(wrong)].join(', ')}`);
  console.log(
    `production install: ${direct.length} direct dependencies, ${all.size} packages; no build, test or lint tool`,
  );
}

async function expectServes(origin: string, key: string): Promise<void> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const signal = () => AbortSignal.timeout(10_000);
  const rest = await fetch(`${origin}/v1/pets`, { headers, signal: signal() });
  const pets = await rest.json();
  if (rest.status !== 200 || !Array.isArray(pets))
    throw new Error(`GET /v1/pets: ${rest.status} ${JSON.stringify(pets)}`);
  const body = JSON.stringify({ query: '{ pets { id } }' });
  const graphql = await fetch(`${origin}/graphql`, { method: 'POST', headers, body, signal: signal() });
  const answer = (await graphql.json()) as { data?: { pets?: unknown } };
  if (graphql.status !== 200 || !Array.isArray(answer.data?.pets)) {
    throw new Error(`POST /graphql: ${graphql.status} ${JSON.stringify(answer)}`);
  }
}

async function serveAndStop(dir: string, dataDir: string): Promise<void> {
  const key = `prod_${randomBytes(16).toString('hex')}`;
  let service: ServiceProcess | undefined;
  try {
    service = await startServiceProcess({ root: dir, via: 'npm', env: { API_KEYS: key, DATA_DIR: dataDir } });
    await expectServes(service.origin, key);
    const code = await service.stop('SIGTERM');
    if (code !== 0) throw new Error(`npm start exited ${code} on SIGTERM`);
    const left = [...processesUsing(dir), ...processesUsing(dataDir)];
    if (left.length > 0) throw new Error(`processes left behind: ${left.join(', ')}`);
  } finally {
    service?.kill();
  }
  console.log('production install: npm start served GET /v1/pets and POST /graphql, and exited 0 on SIGTERM');
}

/** `npm run keys` runs compiled code too: it lists the (no) keys of the stopped service's database. */
function expectKeysCommand(dir: string, dataDir: string): void {
  const env = { ...process.env, MONGODB_URI: '', DATA_DIR: dataDir };
  const args = ['run', '--silent', 'keys', '--', 'list', '--json'];
  const keys = spawnSync('npm', args, { cwd: dir, env, encoding: 'utf8', timeout: COMMAND_DEADLINE_MS });
  if (keys.status !== 0 || keys.stdout.trim() !== '[]') {
    throw new Error(`npm run keys -- list --json: ${keys.status ?? keys.signal}\n${keys.stdout}${keys.stderr}`);
  }
  console.log('production install: npm run keys -- list --json answered []');
}

/** A production install cannot build: a stale tree must be refused in one line, with no build tried. */
function expectStaleRefused(dir: string): void {
  appendFileSync(join(dir, 'src/main.ts'), '\n');
  const check = spawnSync(process.execPath, ['scripts/build.js', '--if-stale'], { cwd: dir, encoding: 'utf8' });
  const lines = check.stderr.trim().split('\n');
  if (check.status !== 1 || lines.length !== 1 || !lines[0]?.includes('production install')) {
    throw new Error(`a stale production install was not refused in one line (${check.status}):\n${check.stderr}`);
  }
  console.log(`production install: refuses a stale build: ${lines[0]}`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-production-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-production-data-'));
  try {
    const entries = readdirSync(ROOT).filter((name) => !NOT_COPIED.has(name));
    step('copied the built tree', () => run('cp', ['-a', ...entries.map((name) => join(ROOT, name)), dir], ROOT));
    step('npm prune --omit=dev', () => run('npm', ['prune', '--omit=dev', '--no-audit', '--no-fund'], dir));
    step('npm ls --omit=dev', () => checkDependencies(dir));
    await serveAndStop(dir, dataDir);
    expectKeysCommand(dir, dataDir);
    expectStaleRefused(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main().catch((error: Error) => {
  console.error(`production install: FAILED: ${error.message}`);
  process.exitCode = 1;
});
