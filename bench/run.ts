// `npm run bench`: our REST and GraphQL against a raw node:http floor and four peers (Sofa, plain
// Yoga; fastify and mercurius, with request logs and rate limits), over an in-memory store and the
// embedded FerretDB, then FerretDB's cost curve; and our service traced (at 0% and 100% sampling)
// against itself untraced, each in a process of its own.
//
// The servers run in forked children (bench/servers.ts, bench/tracing-servers.ts); this process
// only generates load (and sinks the traced targets' OTLP exports). Runs are interleaved in rounds
// (the targets in protocol.ts's order, per operation and store, then again), and
// each ratio is taken within a round and reported as the median over rounds: the machine's speed
// drifts over minutes, and targets measured seconds apart see the same machine. Knobs: settings.ts.

import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { type Servers, startServers } from './child.ts';
import { CURVE_SIZES, runCostCurve } from './cost-curve.ts';
import { fanOutPlan } from './fan-out.ts';
import { measureMemory, renderMemory } from './memory.ts';
import { TARGETS, type Target, TRACING_MODES, tracingModeOf } from './protocol.ts';
import { renderReport } from './report.ts';
import { type Outcome, writeResults } from './results.ts';
import { checkAll, runRounds, type ServersOf } from './rounds.ts';
import { scenariosFor } from './scenarios.ts';
import { readSettings, type Settings } from './settings.ts';
import { summarize } from './summary.ts';
import { startTracingProcesses, type TracingProcesses } from './tracing.ts';

const AUTOCANNON = (createRequire(import.meta.url)('autocannon/package.json') as { version: string }).version;
const progress = (text: string) => process.stderr.write(text);
const load1m = () => loadavg()[0] ?? 0;

async function main(): Promise<number> {
  const settings = readSettings();
  const fanOut = fanOutPlan(process.argv.slice(2));
  if (fanOut.alone) return fanOut.run(progress).then(() => 0);
  const started = Date.now();
  const loadBefore = load1m();
  const curveSizes = settings.curve ? [...CURVE_SIZES] : [];
  const servers = await startServers({ stores: settings.stores, seedPets: settings.seedPets, curveSizes });
  let tracing: TracingProcesses | undefined;
  const stopAll = () => Promise.all([servers.stop(), tracing?.stop()]);
  const onSignal = (signal: string) => {
    progress(`\n[bench] ${signal}: stopping the servers\n`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    if (settings.tracing) tracing = await startTracingProcesses(servers.ready, settings);
    const outcome = await measure(servers, tracing, settings, started);
    outcome.loadAverage1m.before = loadBefore;
    console.log(`\n${renderReport(outcome)}\n`);
    console.log(`written: ${writeResults(outcome)} (${outcome.elapsedSeconds} s)`);
    const failed = outcome.summary.rows.filter((row) => row.failures > 0);
    if (failed.length > 0) {
      const names = failed.map((row) => `${row.store}/${row.operation}/${row.target}`);
      console.error(`[bench] some requests failed (non-2xx, errors or timeouts) in: ${names.join(', ')}`);
      return 1;
    }
  } finally {
    await stopAll();
  }
  // After the servers stopped, so nothing else runs beside the process measured.
  if (settings.memory) console.log(`\n${renderMemory(await measureMemory())}`);
  await fanOut.run(progress);
  return 0;
}

/** Which process serves a target. */
function serversOf(servers: Servers, tracing: TracingProcesses | undefined): ServersOf {
  return (target: Target) => {
    const mode = tracingModeOf(target);
    const serving = mode ? tracing?.servers.get(mode) : servers;
    if (!serving) throw new Error(`no process serves ${target}`);
    return serving;
  };
}

async function measure(
  servers: Servers,
  tracing: TracingProcesses | undefined,
  settings: Settings,
  started: number,
): Promise<Outcome> {
  const { ready } = servers;
  const processes = [servers, ...(tracing?.servers.values() ?? [])];
  const sampleId = Math.ceil(settings.seedPets / 2);
  const scenarios = settings.stores.flatMap((store) => {
    const urls = Object.assign({}, ...processes.map((serving) => serving.ready.urls[store]));
    if (!ready.urls[store]) throw new Error(`the servers did not start the ${store} store`);
    const all = scenariosFor(store, urls, ready.apiKey, sampleId, settings.seedPets);
    return all.filter((scenario) => settings.operations.includes(scenario.operation));
  });
  const byTarget = serversOf(servers, tracing);
  await checkAll(byTarget, scenarios);
  progress(
    `[bench] ready and checked in ${((Date.now() - started) / 1000).toFixed(0)} s; ${ready.database?.label ?? 'no database'}; ` +
      `${settings.rounds} rounds x ${scenarios.length} runs of ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s, ` +
      `${settings.connections} connections; req/s per target:\n`,
  );
  const { runs, rss } = await runRounds(byTarget, scenarios, settings, progress);
  const costCurve = settings.curve
    ? await runCostCurve(servers, {
        urls: ready.curveUrls,
        rounds: settings.rounds,
        seconds: settings.curveSeconds,
        connections: settings.connections,
        progress,
      })
    : undefined;
  const atEnd = await servers.ask({ type: 'rss' });
  return {
    settings,
    ready,
    runs,
    summary: summarize(runs, settings.stores, TARGETS),
    ...(costCurve ? { costCurve } : {}),
    serversRssBytes: { atReady: ready.rss, peak: Math.max(ready.rss, ...rss, atEnd), atEnd },
    ...(tracing ? { tracing: tracingOutcome(tracing) } : {}),
    loadAverage1m: { before: 0, after: load1m() },
    autocannonVersion: AUTOCANNON,
    elapsedSeconds: Math.round((Date.now() - started) / 1000),
  };
}

function tracingOutcome(tracing: TracingProcesses): NonNullable<Outcome['tracing']> {
  const rssOf = (mode: (typeof TRACING_MODES)[number]) => tracing.servers.get(mode)?.ready.rss ?? Number.NaN;
  const rssAtReady = Object.fromEntries(TRACING_MODES.map((mode) => [mode, rssOf(mode)]));
  return { rssAtReady: rssAtReady as NonNullable<Outcome['tracing']>['rssAtReady'], exported: tracing.sink.received() };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`[bench] ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
