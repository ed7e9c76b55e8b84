// One step of the fan-out ladder: open N streams, read the service's memory, send a few spaced
// creates and time each subscriber's read of each, close the streams and read the memory again.

import { randomBytes } from 'node:crypto';
import {
  type Collected,
  ephemeralPorts,
  type FdUse,
  type Forked,
  type Opened,
  type ServerMemory,
  type ServerReady,
  sharedNow,
} from './fan-out-protocol.ts';
import type { FanOutRound, FanOutStep } from './fan-out-report.ts';

/** Streams opening at once per subscriber process: enough to keep the service busy, few enough to queue nothing. */
const OPEN_CONCURRENCY = 64;
/** File descriptors left to each process beyond its streams (listening socket, IPC, files, the create's). */
const FD_RESERVE = 64;
/** Between creates: the previous fan-out's writes are done, the next one meets a quiet instance. */
const ROUND_SPACING_MS = 500;
const COLLECT_MS = 30_000;
const AFTER_CLOSE_MS = 1_000;
const MEMORY_MS = 60_000;
const openDeadlineMs = (streams: number) => 30_000 + 5 * streams;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN);

export interface Processes {
  server: Forked;
  ready: ServerReady;
  clients: Forked[];
}

/** The lowest limit on open streams: the service's descriptors, the subscribers', or loopback ports. */
export function ceilingOf(server: FdUse, clients: FdUse[]): { streams: number; by: string } {
  const limits = [
    {
      streams: server.limit - server.open - FD_RESERVE,
      by: `the service's open-files limit (ulimit -n ${server.limit})`,
    },
    {
      streams: clients.reduce((sum, fds) => sum + fds.limit - fds.open - FD_RESERVE, 0),
      by: `the subscriber processes' open-files limit (${clients.length} x ulimit -n ${clients[0]?.limit})`,
    },
    { streams: ephemeralPorts(), by: 'the loopback ephemeral ports (ip_local_port_range)' },
  ];
  return limits.reduce((lowest, limit) => (limit.streams < lowest.streams ? limit : lowest));
}

/** N split across the subscriber processes. */
const shares = (streams: number, clients: number) =>
  Array.from({ length: clients }, (_, i) => Math.floor(streams / clients) + (i < streams % clients ? 1 : 0));

async function createPet(ready: ServerReady, name: string): Promise<number> {
  const response = await fetch(`${ready.url}/v1/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ready.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, categoryId: 1, status: 'available' }),
    signal: AbortSignal.timeout(COLLECT_MS),
  });
  await response.arrayBuffer();
  if (response.status !== 201) throw new Error(`the create answered ${response.status}`);
  return sharedNow();
}

/** One create; every subscriber's read of it, in ms after the send. */
async function round({ ready, clients }: Processes, name: string): Promise<FanOutRound & { ended: number }> {
  await Promise.all(clients.map((client) => client.ask({ type: 'arm', name }, 10_000)));
  const sent = sharedNow();
  const answered = await createPet(ready, name);
  const collected = await Promise.all(
    clients.map((client) => client.ask<Collected>({ type: 'collect', deadlineMs: COLLECT_MS }, COLLECT_MS + 10_000)),
  );
  const latencies = collected.flatMap((part) => part.arrivals.map((arrival) => arrival - sent)).sort((a, b) => a - b);
  return {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1) ?? Number.NaN,
    createMs: answered - sent,
    missing: collected.reduce((sum, part) => sum + part.missing, 0),
    ended: collected.reduce((sum, part) => sum + part.ended, 0),
  };
}

async function openStreams(
  processes: Processes,
  streams: number,
): Promise<Pick<FanOutStep, 'opened' | 'openFailures'>> {
  const { url, apiKey } = processes.ready;
  const deadlineMs = openDeadlineMs(streams);
  const split = shares(streams, processes.clients.length);
  const parts = await Promise.all(
    processes.clients.map((client, i) =>
      client.ask<Opened>(
        { type: 'open', url, apiKey, count: split[i], concurrency: OPEN_CONCURRENCY, deadlineMs },
        deadlineMs + 10_000,
      ),
    ),
  );
  const openFailures: Record<string, number> = {};
  for (const [reason, count] of parts.flatMap((part) => Object.entries(part.failures))) {
    openFailures[reason] = (openFailures[reason] ?? 0) + count;
  }
  return { opened: parts.reduce((sum, part) => sum + part.opened, 0), openFailures };
}

/** Closes every stream and waits (with a deadline) until the service holds none. */
async function closeStreams({ server, clients }: Processes): Promise<ServerMemory> {
  await Promise.all(clients.map((client) => client.ask({ type: 'close', deadlineMs: 30_000 }, 40_000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const memory = await server.ask<ServerMemory>({ type: 'memory' }, MEMORY_MS);
    // Sockets and their buffers go a moment after the streams' slots: read the heap once they have.
    if (memory.openStreams === 0)
      return sleep(AFTER_CLOSE_MS).then(() => server.ask<ServerMemory>({ type: 'memory' }, MEMORY_MS));
    if (Date.now() > deadline)
      throw new Error(`the service still holds ${memory.openStreams} streams 30 s after they closed`);
    await sleep(200);
  }
}

/** Why a step does not hold, or undefined when it does. */
function verdictOf(step: Omit<FanOutStep, 'verdict'>, boundMs: number): Pick<FanOutStep, 'verdict' | 'why'> {
  const failures = Object.entries(step.openFailures).map(([reason, count]) => `${count} x ${reason}`);
  if (step.opened < step.streams) return { verdict: 'failed', why: `${step.opened} opened; ${failures.join(', ')}` };
  if (step.atN.openStreams !== step.opened) {
    return { verdict: 'failed', why: `${step.opened} opened, the service counts ${step.atN.openStreams}` };
  }
  const missing = step.rounds.reduce((sum, round) => sum + round.missing, 0);
  if (missing > 0 || step.ended > 0)
    return { verdict: 'failed', why: `${missing} events missing, ${step.ended} streams ended` };
  const p99 = Math.max(...step.rounds.map((round) => round.p99));
  if (p99 > boundMs) return { verdict: 'over the bound', why: `p99 ${p99.toFixed(0)} ms` };
  return { verdict: 'holds' };
}

/** One step: `streams` opened, `rounds` creates, closed again; memory per stream over `baseline`. */
export async function measureStep(
  processes: Processes,
  options: { streams: number; rounds: number; boundMs: number; baseline: ServerMemory },
): Promise<FanOutStep> {
  const { streams, baseline } = options;
  const started = Date.now();
  const { opened, openFailures } = await openStreams(processes, streams);
  const openSeconds = (Date.now() - started) / 1000;
  // Also the moment every follower has its cursor: the message is answered after their first reads.
  const atN = await processes.server.ask<ServerMemory>({ type: 'memory' }, MEMORY_MS);
  const perStream = {
    rss: (atN.rss - baseline.rss) / Math.max(1, opened),
    heap: (atN.heapUsed - baseline.heapUsed) / Math.max(1, opened),
    external: (atN.external - baseline.external) / Math.max(1, opened),
  };
  const rounds: FanOutRound[] = [];
  let ended = 0;
  const tag = randomBytes(4).toString('hex');
  for (let i = 0; opened === streams && i < options.rounds; i++) {
    await sleep(ROUND_SPACING_MS);
    const { ended: endedNow, ...measured } = await round(processes, `fanout-${tag}-${streams}-${i}`);
    rounds.push(measured);
    ended = endedNow;
  }
  const afterClose = await closeStreams(processes);
  const step = { streams, opened, openSeconds, openFailures, rounds, perStream, atN, afterClose, ended };
  return { ...step, ...verdictOf(step, options.boundMs) };
}
