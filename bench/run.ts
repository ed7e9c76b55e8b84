// `npm run bench`: throughput and latency of the gateway against a raw node:http floor, side by side.
//
// Starts bench/servers.ts as a child process (the embedded FerretDB in a temp dir, 200 pets seeded
// through the repository, a raw node:http baseline and the real app), then drives each scenario with
// autocannon from this process: a short warm-up run (discarded), then the measured run. Prints a
// table, writes bench/results/latest.json, stops the child (which stops FerretDB and removes its
// directory) and exits.
//
// Two passes: `ferretdb` (the figures asked for: the repository over the embedded FerretDB) and
// `memory` (the same pets in an in-memory repository). FerretDB-on-SQLite answers a few hundred
// queries a second at best, so in the first pass the database dominates and the layers above it
// barely show; the second pass shows what the HTTP, GraphQL and REST layers themselves cost, which
// is what the reference points in shared/REFERENCES.md compare. BENCH_MEMORY=0 skips it.
// 12 × (2 + 8) s of load plus start-up: about 2 min 10 s (about 65 s with BENCH_MEMORY=0).
//
// Why the servers live in a child process: autocannon without workers generates load on the event
// loop of the process that calls it. With the servers in this process too, one thread would both
// produce and serve every request, and the figures would measure the load generator as much as the
// server. Separate processes let the OS schedule them on separate cores (on a 2-core machine they
// still compete with each other and with FerretDB, which is why only the ratios mean anything).
//
// Knobs (environment): BENCH_DURATION (s, default 8), BENCH_WARMUP (s, default 2),
// BENCH_CONNECTIONS (default 10), BENCH_SEED_PETS (default 200), BENCH_MEMORY (0 skips that pass).
// BENCH_CPU_PROF=DIR writes a V8 CPU profile of the servers process there (open it in Chrome DevTools).

import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { ChildMessage, ParentMessage, StoreName } from './protocol.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const READY_TIMEOUT_MS = 180_000; // a first run may have to build FerretDB
const STOP_TIMEOUT_MS = 15_000;
const LIST_LIMIT = 20;
const STORES: StoreName[] = process.env.BENCH_MEMORY === '0' ? ['ferretdb'] : ['ferretdb', 'memory'];

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVERS = fileURLToPath(new URL('./servers.ts', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const RESULTS_FILE = fileURLToPath(new URL('./results/latest.json', import.meta.url));
const AUTOCANNON_VERSION = (createRequire(import.meta.url)('autocannon/package.json') as { version: string }).version;

type Ready = Extract<ChildMessage, { type: 'ready' }>;
type Operation = 'list' | 'get';
type Target = 'baseline' | 'graphql' | 'rest';

interface Scenario {
  store: StoreName;
  operation: Operation;
  target: Target;
  description: string;
  request: { url: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string };
  /** Throws unless one request answers what the scenario claims to measure. */
  check(status: number, body: unknown): void;
}

interface Measured {
  store: StoreName;
  operation: Operation;
  target: Target;
  description: string;
  requestsPerSecond: number;
  requestsTotal: number;
  latencyMs: { p50: number; p99: number; average: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  serverRssAfter: number;
}

const OPERATION_LABEL: Record<Operation, string> = { list: `list ${LIST_LIMIT}`, get: 'get by id' };

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

function scenarios(ready: Ready, store: StoreName): Scenario[] {
  const { baselineUrl, appUrl } = ready.stores[store];
  const auth = { authorization: `Bearer ${ready.apiKey}` };
  const graphql = (query: string) => ({
    url: `${appUrl}/graphql`,
    method: 'POST' as const,
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  const isList = (body: unknown) => Array.isArray(body) && body.length === LIST_LIMIT;
  const isPet = (body: unknown) => (body as { id?: unknown } | null)?.id !== undefined && String((body as { id: unknown }).id) === String(ready.sampleId);
  const gqlData = (body: unknown) => {
    const result = body as { data?: Record<string, unknown>; errors?: unknown };
    assert(!result.errors, `GraphQL errors: ${JSON.stringify(result.errors)}`);
    return result.data ?? {};
  };
  const ok = (status: number) => assert(status === 200, `status ${status}`);
  const list: Omit<Scenario, 'store'>[] = [
    {
      operation: 'list',
      target: 'baseline',
      description: `raw node:http → repository.listPage({ limit: ${LIST_LIMIT} })`,
      request: { url: `${baselineUrl}/pets?limit=${LIST_LIMIT}`, method: 'GET', headers: {} },
      check: (status, body) => (ok(status), assert(isList(body), 'expected 20 pets')),
    },
    {
      operation: 'list',
      target: 'graphql',
      description: `POST /graphql { pets(limit: ${LIST_LIMIT}) { id name categoryId status } }`,
      request: graphql(`{ pets(limit: ${LIST_LIMIT}) { id name categoryId status } }`),
      check: (status, body) => (ok(status), assert(isList(gqlData(body).pets), 'expected 20 pets')),
    },
    {
      operation: 'list',
      target: 'rest',
      description: `GET /v1/pets?limit=${LIST_LIMIT}`,
      request: { url: `${appUrl}/v1/pets?limit=${LIST_LIMIT}`, method: 'GET', headers: auth },
      check: (status, body) => (ok(status), assert(isList(body), 'expected 20 pets')),
    },
    {
      operation: 'get',
      target: 'baseline',
      description: `raw node:http → repository.findById(${ready.sampleId})`,
      request: { url: `${baselineUrl}/pets/${ready.sampleId}`, method: 'GET', headers: {} },
      check: (status, body) => (ok(status), assert(isPet(body), 'expected the sample pet')),
    },
    {
      operation: 'get',
      target: 'graphql',
      description: `POST /graphql { pet(id: "${ready.sampleId}") { id name categoryId status } }`,
      request: graphql(`{ pet(id: "${ready.sampleId}") { id name categoryId status } }`),
      check: (status, body) => (ok(status), assert(isPet(gqlData(body).pet), 'expected the sample pet')),
    },
    {
      operation: 'get',
      target: 'rest',
      description: `GET /v1/pets/${ready.sampleId}`,
      request: { url: `${appUrl}/v1/pets/${ready.sampleId}`, method: 'GET', headers: auth },
      check: (status, body) => (ok(status), assert(isPet(body), 'expected the sample pet')),
    },
  ];
  return list.map((scenario) => ({ ...scenario, store }));
}

// ---- the child process ----------------------------------------------------------------------

function startServers(): { child: ChildProcess; ready: Promise<Ready> } {
  // `--import tsx` runs the TypeScript child the way `tsx` runs this file; stdout/stderr are shared.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = fork(SERVERS, [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx', ...profile],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the servers did not become ready in time')), READY_TIMEOUT_MS);
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') resolve(message);
      if (message.type === 'failed') reject(new Error(`the servers failed to start: ${message.message}`));
      if (message.type !== 'rss') clearTimeout(timer);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the servers exited early (code ${code}, signal ${signal})`));
    });
  });
  return { child, ready };
}

let rssRequests = 0;
function childRss(child: ChildProcess): Promise<number> {
  const id = ++rssRequests;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no RSS answer from the servers')), 5_000);
    const onMessage = (message: ChildMessage) => {
      if (message.type === 'rss' && message.id === id) {
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message.rss);
      }
    };
    child.on('message', onMessage);
    child.send({ type: 'rss', id } satisfies ParentMessage);
  });
}

async function stopServers(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  if (child.connected) child.send({ type: 'stop' } satisfies ParentMessage);
  else child.kill('SIGTERM');
  const timer = setTimeout(() => {
    process.stderr.write('[bench] the servers did not stop in time: killing them\n');
    child.kill('SIGKILL');
  }, STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

// ---- measuring ------------------------------------------------------------------------------

async function checkOnce(scenario: Scenario): Promise<void> {
  const { url, method, headers, body } = scenario.request;
  const response = await fetch(url, { method, headers, body: body ?? null });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  try {
    scenario.check(response.status, parsed);
  } catch (error) {
    throw new Error(`${scenario.store} / ${OPERATION_LABEL[scenario.operation]} / ${scenario.target}: ${(error as Error).message}; body: ${text.slice(0, 300)}`);
  }
}

function load(scenario: Scenario, seconds: number): Promise<autocannon.Result> {
  const { url, method, headers, body } = scenario.request;
  return autocannon({
    url,
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    // No `workers`: the load runs on this process's event loop, which serves nothing.
  });
}

async function measure(scenario: Scenario, child: ChildProcess): Promise<Measured> {
  await checkOnce(scenario);
  if (WARMUP_S > 0) await load(scenario, WARMUP_S);
  const result = await load(scenario, DURATION_S);
  return {
    store: scenario.store,
    operation: scenario.operation,
    target: scenario.target,
    description: scenario.description,
    requestsPerSecond: result.requests.average,
    requestsTotal: result.requests.total,
    latencyMs: {
      p50: result.latency.p50,
      p99: result.latency.p99,
      average: result.latency.average,
      max: result.latency.max,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    serverRssAfter: await childRss(child),
  };
}

// ---- reporting ------------------------------------------------------------------------------

const MB = 1024 * 1024;
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const pct = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;
// autocannon records latencies in whole milliseconds, so percentiles are integers.
const ms = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

/** Plain-text columns: the first `textColumns` left-aligned, the figures right-aligned. */
function table(rows: string[][], textColumns: number): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column < textColumns ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const STORE_LABEL: Record<StoreName, string> = { ferretdb: 'FerretDB', memory: 'in-memory' };

type Ratios = { restToBaseline: number; graphqlToBaseline: number; restToGraphql: number };

function ratiosOf(results: Measured[], store: StoreName): Record<Operation, Ratios> {
  const rps = (operation: Operation, target: Target) =>
    results.find((result) => result.store === store && result.operation === operation && result.target === target)!
      .requestsPerSecond;
  const of = (operation: Operation) => ({
    restToBaseline: rps(operation, 'rest') / rps(operation, 'baseline'),
    graphqlToBaseline: rps(operation, 'graphql') / rps(operation, 'baseline'),
    restToGraphql: rps(operation, 'rest') / rps(operation, 'graphql'),
  });
  return { list: of('list'), get: of('get') };
}

// ---- main -----------------------------------------------------------------------------------

async function main(): Promise<number> {
  const started = Date.now();
  // Taken before our own processes start: anything above ~0 means others are using these cores too.
  const loadBefore = loadavg()[0]!;
  const generatorRssBefore = process.memoryUsage().rss;
  const { child, ready: readyPromise } = startServers();

  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`[bench] ${signal}: stopping the servers\n`);
    void stopServers(child).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const ready = await readyPromise;
    const all = STORES.flatMap((store) => scenarios(ready, store));
    process.stderr.write(
      `[bench] ${ready.database.label}; ${ready.seeded} pets; ${all.length} scenarios × (${WARMUP_S} s warm-up + ${DURATION_S} s), ${CONNECTIONS} connections\n`,
    );
    const serverRssBefore = await childRss(child);

    const results: Measured[] = [];
    for (const scenario of all) {
      process.stderr.write(
        `[bench] ${STORE_LABEL[scenario.store].padEnd(9)} ${OPERATION_LABEL[scenario.operation].padEnd(9)} ${scenario.target.padEnd(8)} … `,
      );
      const measured = await measure(scenario, child);
      results.push(measured);
      process.stderr.write(`${measured.requestsPerSecond.toFixed(0)} req/s\n`);
    }
    const serverRssAfter = await childRss(child);
    const generatorRssAfter = process.memoryUsage().rss;
    const loadAfter = loadavg()[0]!;
    const ratios = Object.fromEntries(STORES.map((store) => [store, ratiosOf(results, store)])) as Partial<
      Record<StoreName, Record<Operation, Ratios>>
    >;
    const failed = results.filter((result) => result.non2xx + result.errors + result.timeouts > 0);

    const baselineOf = (store: StoreName, operation: Operation) =>
      results.find((result) => result.store === store && result.operation === operation && result.target === 'baseline')!
        .requestsPerSecond;
    const cpuList = cpus();
    const busy = loadBefore > 0.5;
    const header = [
      `petstore-gateway benchmark — database: ${ready.database.label}`,
      `Figures are meaningful only as ratios, on this machine (${cpuList.length} cores: load generator, servers and database share them).`,
      `autocannon ${AUTOCANNON_VERSION}, ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s measured per scenario, ${ready.seeded} pets seeded, Node ${process.version}`,
      `1-min load average ${loadBefore.toFixed(2)} before the run, ${loadAfter.toFixed(2)} after` +
        (busy ? ' — WARNING: other work was running on this machine; treat the figures as noisy.' : ''),
      ...(STORES.includes('memory')
        ? ['"in-memory" rows: same servers over an in-memory repository (no database), to show the layers\' own cost.']
        : []),
    ].join('\n');
    const mainTable = table([
      ['store', 'operation', 'target', 'req/s', 'p50 ms', 'p99 ms', 'vs baseline', 'non-2xx/errors'],
      ...results.map((result) => [
        STORE_LABEL[result.store],
        OPERATION_LABEL[result.operation],
        result.target,
        result.requestsPerSecond.toFixed(0),
        ms(result.latencyMs.p50),
        ms(result.latencyMs.p99),
        pct(result.requestsPerSecond / baselineOf(result.store, result.operation)),
        `${result.non2xx}/${result.errors + result.timeouts}`,
      ]),
    ], 3);
    const ratioTable = table([
      ['ratio of req/s', ...STORES.flatMap((store) => [`${STORE_LABEL[store]} ${OPERATION_LABEL.list}`, `${STORE_LABEL[store]} ${OPERATION_LABEL.get}`])],
      ...(
        [
          ['REST / baseline', 'restToBaseline'],
          ['GraphQL / baseline', 'graphqlToBaseline'],
          ['REST / GraphQL', 'restToGraphql'],
        ] as const
      ).map(([label, key]) => [label, ...STORES.flatMap((store) => [pct(ratios[store]!.list[key]), pct(ratios[store]!.get[key])])]),
    ], 1);
    const memoryTable = table([
      ['RSS (process.memoryUsage().rss)', 'before', 'after', 'peak seen'],
      [
        `servers (pid ${ready.pid})`,
        mb(serverRssBefore),
        mb(serverRssAfter),
        mb(Math.max(serverRssBefore, serverRssAfter, ...results.map((result) => result.serverRssAfter))),
      ],
      ['load generator (this process)', mb(generatorRssBefore), mb(generatorRssAfter), ''],
    ], 1);
    console.log(`\n${header}\n\n${mainTable}\n\n${ratioTable}\n\n${memoryTable}\n`);

    const report = {
      generatedAt: new Date().toISOString(),
      note: 'Figures are meaningful only as ratios on the machine that produced them; load generator, servers and database share its cores.',
      database: ready.database,
      machine: {
        cpus: cpuList.length,
        cpuModel: cpuList[0]?.model ?? 'unknown',
        totalMemoryBytes: totalmem(),
        platform: `${process.platform}-${process.arch}`,
        node: process.version,
        loadAverage1m: { before: loadBefore, after: loadAfter },
      },
      settings: {
        loadGenerator: `autocannon ${AUTOCANNON_VERSION} (programmatic, no workers, separate process from the servers)`,
        connections: CONNECTIONS,
        pipelining: 1,
        warmupSeconds: WARMUP_S,
        durationSeconds: DURATION_S,
        seededPets: ready.seeded,
        listLimit: LIST_LIMIT,
        sampleId: ready.sampleId,
        stores: STORES,
      },
      results,
      ratios,
      memory: {
        serversRssBytes: { atReady: ready.rss, before: serverRssBefore, after: serverRssAfter },
        loadGeneratorRssBytes: { before: generatorRssBefore, after: generatorRssAfter },
      },
      elapsedSeconds: Math.round((Date.now() - started) / 1000),
    };
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`written: bench/results/latest.json (${report.elapsedSeconds} s)`);

    if (failed.length > 0) {
      console.error(
        `some scenarios saw non-2xx responses or errors: ${failed.map((f) => `${f.store}/${f.operation}/${f.target}`).join(', ')}`,
      );
      return 1;
    }
    return 0;
  } finally {
    await stopServers(child);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`[bench] ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
