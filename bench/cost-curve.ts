// How the embedded database's cost grows with the number of stored pets. FerretDB v1 on SQLite
// pushes no numeric-_id filter down, so every get and list reads the whole collection: latency is
// about linear in the pet count, which is what makes a straight line between two sizes fair.
// Floor target only, so the figures are the database's cost: at 1 connection (one request on an
// idle service), and gets also at the main rounds' connection count (a busy one). Interleaved in
// rounds like the main runs, medians over rounds, so one slow moment does not set the threshold.

import type { Servers } from './child.ts';
import { checkOnce, load, type Run } from './measure.ts';
import type { Operation } from './scenarios.ts';
import { spread } from './summary.ts';

export const CURVE_SIZES = [1_000, 10_000] as const;
/** The p99 of a get that docs/benchmarks.md#the-embedded-database and the startup warning are about. */
export const GET_P99_LIMIT_MS = 100;

export interface CurvePoint {
  pets: number;
  operation: Extract<Operation, 'get' | 'list20'>;
  connections: number;
  /** Medians over rounds; `requests` is the total over rounds. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
}

export interface Threshold {
  connections: number;
  /** Stored pets at which the line through the two sizes' get p99s crosses the limit. */
  pets: number | null;
  /** The same for the p50, for context: where a typical get crosses it. */
  p50Pets: number | null;
  how: 'interpolated' | 'extrapolated' | 'not rising' | 'no data';
}

export interface CurveOptions {
  urls: Record<number, string>;
  rounds: number;
  seconds: number;
  /** The busy case's connection count. */
  connections: number;
  progress: (text: string) => void;
}

export async function runCostCurve(
  servers: Servers,
  options: CurveOptions,
): Promise<{ points: CurvePoint[]; thresholds: Threshold[] }> {
  const cases = [
    { operation: 'get', connections: 1 },
    { operation: 'list20', connections: 1 },
    { operation: 'get', connections: options.connections },
  ] as const;
  const path = (operation: CurvePoint['operation'], pets: number) =>
    operation === 'get' ? `/pets/${Math.ceil(pets / 2)}` : '/pets?limit=20';
  const request = (operation: CurvePoint['operation'], pets: number) => ({
    url: `${options.urls[pets]}${path(operation, pets)}`,
    method: 'GET' as const,
    headers: {},
  });
  const check = (status: number, body: unknown) => {
    if (status !== 200 || !body || typeof body !== 'object') throw new Error(`expected 200 and JSON, got ${status}`);
  };
  for (const pets of CURVE_SIZES) {
    for (const operation of ['get', 'list20'] as const)
      await checkOnce({ request: request(operation, pets), check }, `cost curve ${operation} at ${pets} pets`);
  }

  const runs: { pets: number; operation: CurvePoint['operation']; connections: number; run: Run }[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    options.progress(`[bench] cost curve, round ${round}, p99 ms:`);
    for (const { operation, connections } of cases) {
      for (const pets of CURVE_SIZES) {
        // Busy gets at 10,000 pets take over a second each: a longer run so that enough complete.
        const seconds = connections > 1 ? options.seconds * 1.5 : options.seconds;
        const run = await load(request(operation, pets), seconds, connections);
        // A busy run leaves gets queued in FerretDB; they must not run in the next run's window.
        await servers.ask({ type: 'settle', store: `curve-${pets}`, reset: false }, 60_000);
        runs.push({ pets, operation, connections, run });
        options.progress(`  ${operation} c=${connections} ${pets}: ${run.latencyMs.p99.toFixed(0)}`);
      }
    }
    options.progress('\n');
  }
  const points = cases.flatMap(({ operation, connections }) =>
    CURVE_SIZES.map((pets): CurvePoint => {
      const mine = runs
        .filter((r) => r.pets === pets && r.operation === operation && r.connections === connections)
        .map((r) => r.run);
      return {
        pets,
        operation,
        connections,
        requestsPerSecond: spread(mine.map((run) => run.requestsPerSecond)).median,
        p50Ms: spread(mine.map((run) => run.latencyMs.p50)).median,
        p99Ms: spread(mine.map((run) => run.latencyMs.p99)).median,
        requests: mine.reduce((sum, run) => sum + run.requests, 0),
      };
    }),
  );
  return {
    points,
    thresholds: [...new Set([1, options.connections])].map((connections) => threshold(points, connections)),
  };
}

/** Where the straight line through the get latencies at the two sizes reaches GET_P99_LIMIT_MS. */
function threshold(points: CurvePoint[], connections: number): Threshold {
  const [n1, n2] = CURVE_SIZES;
  const gets = CURVE_SIZES.map(
    (pets) => points.find((p) => p.pets === pets && p.operation === 'get' && p.connections === connections)!,
  );
  const crossing = (latency: (point: CurvePoint) => number): number | null => {
    const [small, large] = gets.map(latency) as [number, number];
    if (!(large > small)) return null;
    return Math.max(0, Math.round(n1 + ((GET_P99_LIMIT_MS - small) * (n2 - n1)) / (large - small)));
  };
  if (gets.some((point) => point.requests === 0)) return { connections, pets: null, p50Pets: null, how: 'no data' };
  const pets = crossing((point) => point.p99Ms);
  const p50Pets = crossing((point) => point.p50Ms);
  if (pets === null) return { connections, pets, p50Pets, how: 'not rising' };
  return { connections, pets, p50Pets, how: pets >= n1 && pets <= n2 ? 'interpolated' : 'extrapolated' };
}
