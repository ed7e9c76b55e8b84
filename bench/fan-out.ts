// The subscriptions fan-out figure (issue 31): N open SSE streams of `petCreated` on one instance of
// our service (its own process: fan-out-server.ts, in-memory store, stream limits raised), the
// subscribers in others (fan-out-clients.ts), each create sent over REST from here; per create, how
// long until each subscriber has read the event, and the service's memory per open stream. N climbs
// a ladder until a step fails, a step's p99 passes the bound, or the next step would pass a
// file-descriptor or port limit (that limit becomes the last step). Part of `npm run bench`
// (BENCH_FANOUT=0 skips it); alone: `npm run bench -- fan-out`. Knobs: fan-out-settings.ts.

import { loadavg } from 'node:os';
import { startFlags } from '../test/support/start-flags.ts';
import { SERVICE_UNDER_TEST_FLAGS } from './child.ts';
import { type FdUse, type Forked, forkChild, type ServerMemory, type ServerReady } from './fan-out-protocol.ts';
import { type FanOutResult, type FanOutStep, renderFanOut } from './fan-out-report.ts';
import { type FanOutSettings, readFanOutSettings } from './fan-out-settings.ts';
import { ceilingOf, measureStep, type Processes } from './fan-out-step.ts';

const READY_MS = 120_000;
/** A few streams and a create before the baseline: the code paths loaded and compiled, not counted per stream. */
const WARM_UP_STREAMS = 20;
const load1m = () => loadavg()[0] ?? 0;

async function startProcesses(settings: FanOutSettings): Promise<Processes> {
  const maxStreams = Math.max(WARM_UP_STREAMS, Math.min(100_000, settings.max, settings.steps.at(-1) ?? 1));
  const clients: Forked[] = [];
  let server: Forked | undefined;
  try {
    const started = await forkChild<ServerReady>('./fan-out-server.ts', {
      args: [JSON.stringify({ maxStreams })],
      execArgv: [...startFlags(), ...SERVICE_UNDER_TEST_FLAGS, '--expose-gc'],
      readyMs: READY_MS,
    });
    server = started.forked;
    for (let i = 0; i < settings.clients; i++) {
      const client = await forkChild<{ fds: FdUse }>('./fan-out-clients.ts', {
        args: [],
        execArgv: ['--import', 'tsx'],
        readyMs: READY_MS,
      });
      clients.push(client.forked);
    }
    return { server, ready: started.ready, clients };
  } catch (error) {
    await Promise.all([server?.stop(), ...clients.map((client) => client.stop())]);
    throw error;
  }
}

/** The ladder's steps up to the lowest limit; a step past it is replaced by the limit itself. */
function ladder(settings: FanOutSettings, ceiling: { streams: number; by: string }) {
  const wanted = settings.steps.filter((step) => step <= settings.max);
  const steps = wanted.filter((step) => step < ceiling.streams);
  const capped = steps.length < wanted.length;
  if (capped) steps.push(ceiling.streams);
  const top = settings.max < (settings.steps.at(-1) ?? 0) ? `BENCH_FANOUT_MAX (${settings.max})` : 'its last step';
  return { steps, stoppedBy: capped ? ceiling.by : top };
}

/** Runs the whole ladder; `progress` gets a line per step. Every process it starts is stopped. */
export async function runFanOut(settings: FanOutSettings, progress: (line: string) => void): Promise<FanOutResult> {
  const before = load1m();
  const processes = await startProcesses(settings);
  const stopAll = () => Promise.all([processes.server.stop(), ...processes.clients.map((client) => client.stop())]);
  try {
    const clientFds = await Promise.all(processes.clients.map((client) => client.ask<FdUse>({ type: 'fds' }, 10_000)));
    const ceiling = ceilingOf(processes.ready.fds, clientFds);
    const planned = ladder(settings, ceiling);
    const warmUp = { rounds: 1, boundMs: settings.boundMs };
    const first = await processes.server.ask<ServerMemory>({ type: 'memory' }, 60_000);
    await measureStep(processes, { ...warmUp, streams: WARM_UP_STREAMS, baseline: first });
    const baseline = await processes.server.ask<ServerMemory>({ type: 'memory' }, 60_000);
    const steps: FanOutStep[] = [];
    let stoppedBy = planned.stoppedBy;
    for (const streams of planned.steps) {
      progress(`[bench] fan-out: ${streams} streams...`);
      const step = await measureStep(processes, {
        streams,
        rounds: settings.rounds,
        boundMs: settings.boundMs,
        baseline,
      });
      steps.push(step);
      progress(` ${step.verdict}${step.why ? ` (${step.why})` : ''} in ${step.openSeconds.toFixed(1)} s to open\n`);
      if (step.verdict !== 'holds') {
        stoppedBy = `${step.verdict} at ${streams} streams (${step.why})`;
        break;
      }
    }
    const loadAverage1m = { before, after: load1m() };
    return { settings, baseline, steps, ceiling, stoppedBy, loadAverage1m, node: process.versions.node };
  } finally {
    await stopAll();
  }
}

/**
 * bench/run.ts's hook: with `fan-out` as its argument the fan-out runs alone; otherwise after the
 * rest unless BENCH_FANOUT=0. The settings are read at once, so a bad one stops the run before it starts.
 */
export function fanOutPlan(argv: string[], env: NodeJS.ProcessEnv = process.env) {
  const alone = argv.includes('fan-out');
  const settings = alone || env.BENCH_FANOUT !== '0' ? readFanOutSettings(env) : undefined;
  const run = async (progress: (line: string) => void) => {
    if (settings) console.log(`\n${renderFanOut(await runFanOut(settings, progress))}`);
  };
  return { alone, run };
}
