// From the rounds' raw runs to the figures we report. Ratios are taken within a round (targets run
// seconds apart there, so drift in the machine's speed cancels) and then the median over rounds.

import type { Run } from './measure.ts';
import type { StoreName, Target } from './protocol.ts';
import { OPERATIONS, type Operation } from './scenarios.ts';

export interface RoundRun {
  round: number;
  store: StoreName;
  operation: Operation;
  target: Target;
  description: string;
  run: Run;
}

/** A median with the spread it came from, so a noisy ratio shows as one. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export const RATIOS = {
  'rest / floor': { of: 'rest', to: 'floor' },
  'sofa / floor': { of: 'sofa', to: 'floor' },
  'graphql / floor': { of: 'graphql', to: 'floor' },
  'yoga / floor': { of: 'yoga', to: 'floor' },
  'rest / sofa': { of: 'rest', to: 'sofa' },
  'rest / fastify': { of: 'rest', to: 'fastify' },
  'rest / rest-silent': { of: 'rest', to: 'rest-silent' },
  'rest-redis / rest': { of: 'rest-redis', to: 'rest' },
  'graphql / yoga': { of: 'graphql', to: 'yoga' },
  'graphql / mercurius': { of: 'graphql', to: 'mercurius' },
  'graphql-by-id / graphql': { of: 'graphql-by-id', to: 'graphql' },
  // Tracing: each against the same service in a process of the same kind, tracing off.
  'rest-otel-0 / rest-otel-off': { of: 'rest-otel-0', to: 'rest-otel-off' },
  'rest-otel-100 / rest-otel-off': { of: 'rest-otel-100', to: 'rest-otel-off' },
  'graphql-otel-0 / graphql-otel-off': { of: 'graphql-otel-0', to: 'graphql-otel-off' },
  'graphql-otel-100 / graphql-otel-off': { of: 'graphql-otel-100', to: 'graphql-otel-off' },
} as const satisfies Record<string, { of: Target; to: Target }>;

/** The traced targets whose cost per request is reported, each against its face's `-otel-off`. */
export const TRACED = ['rest-otel-0', 'rest-otel-100', 'graphql-otel-0', 'graphql-otel-100'] as const;
export type Traced = (typeof TRACED)[number];
const untracedOf = (target: Traced): Target => (target.startsWith('rest') ? 'rest-otel-off' : 'graphql-otel-off');
export type RatioName = keyof typeof RATIOS | 'p99 rest / p99 floor';

export interface Row {
  store: StoreName;
  operation: Operation;
  target: Target;
  description: string;
  requestsPerSecond: Spread;
  p50Ms: Spread;
  p99Ms: Spread;
  /** req/s over the floor's in the same round. */
  vsFloor: Spread;
  /** The target's own time per request: 1/its req/s minus 1/the floor's, same round, in µs. */
  usAboveFloor: Spread;
  failures: number;
}

export function spread(values: number[]): Spread {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)! };
}

/** Per round, `value(of) / value(to)` (or `combine` them otherwise); then their spread. */
function perRound(
  runs: RoundRun[],
  store: StoreName,
  operation: Operation,
  of: Target,
  to: Target,
  value: (run: Run) => number,
  combine = (a: number, b: number) => a / b,
): Spread {
  const rounds = [...new Set(runs.map((run) => run.round))];
  const find = (round: number, target: Target) =>
    runs.find(
      (run) => run.round === round && run.store === store && run.operation === operation && run.target === target,
    );
  return spread(
    rounds.map((round) => {
      const a = find(round, of);
      const b = find(round, to);
      return a && b ? combine(value(a.run), value(b.run)) : Number.NaN;
    }),
  );
}

/** A run's time per request in µs (10 connections: the inverse of throughput, not latency). */
const perRequestUs = (run: Run) => 1e6 / run.requestsPerSecond;
const minus = (a: number, b: number) => a - b;

export function summarize(runs: RoundRun[], stores: StoreName[], targets: readonly Target[]) {
  const rows: Row[] = [];
  const ratios: Partial<Record<StoreName, Record<RatioName, Record<Operation, Spread>>>> = {};
  /** Microseconds a request costs more with its limits in Redis: 1/req/s of rest-redis minus rest's, on `get`. */
  const redisLimiterCostUs: Partial<Record<StoreName, Spread>> = {};
  /** The info-level access log's share of a REST get: 1 - rest's req/s over rest-silent's, same round. */
  const accessLogShare: Partial<Record<StoreName, Spread>> = {};
  /** Microseconds a request by documentId costs more than the same document sent whole (negative: less). */
  const byIdCostUs: Partial<Record<StoreName, Record<'get' | 'create', Spread>>> = {};
  /** Microseconds tracing adds to a get, at 0% and 100% sampling: 1/req/s of each minus tracing off's. */
  const tracingCostUs: Partial<Record<StoreName, Record<Traced, Spread>>> = {};
  for (const store of stores) {
    for (const operation of OPERATIONS) {
      for (const target of targets) {
        const mine = runs.filter((run) => run.store === store && run.operation === operation && run.target === target);
        if (mine.length === 0) continue;
        rows.push({
          store,
          operation,
          target,
          description: mine[0]!.description,
          requestsPerSecond: spread(mine.map((run) => run.run.requestsPerSecond)),
          p50Ms: spread(mine.map((run) => run.run.latencyMs.p50)),
          p99Ms: spread(mine.map((run) => run.run.latencyMs.p99)),
          vsFloor: perRound(runs, store, operation, target, 'floor', (run) => run.requestsPerSecond),
          usAboveFloor: perRound(runs, store, operation, target, 'floor', perRequestUs, minus),
          failures: mine.reduce((sum, run) => sum + run.run.failures, 0),
        });
      }
    }
    const byName = {} as Record<RatioName, Record<Operation, Spread>>;
    for (const [name, { of, to }] of Object.entries(RATIOS)) {
      byName[name as RatioName] = ratioRow((operation) =>
        perRound(runs, store, operation, of, to, (run) => run.requestsPerSecond),
      );
    }
    byName['p99 rest / p99 floor'] = ratioRow((operation) =>
      perRound(runs, store, operation, 'rest', 'floor', (run) => run.latencyMs.p99),
    );
    ratios[store] = byName;
    accessLogShare[store] = perRound(
      runs,
      store,
      'get',
      'rest',
      'rest-silent',
      (run) => run.requestsPerSecond,
      (a, b) => 1 - a / b,
    );
    redisLimiterCostUs[store] = perRound(runs, store, 'get', 'rest-redis', 'rest', perRequestUs, minus);
    byIdCostUs[store] = {
      get: perRound(runs, store, 'get', 'graphql-by-id', 'graphql', perRequestUs, minus),
      create: perRound(runs, store, 'create', 'graphql-by-id', 'graphql', perRequestUs, minus),
    };
    tracingCostUs[store] = Object.fromEntries(
      TRACED.map((target) => [target, perRound(runs, store, 'get', target, untracedOf(target), perRequestUs, minus)]),
    ) as Record<Traced, Spread>;
  }
  return { rows, ratios, accessLogShare, redisLimiterCostUs, byIdCostUs, tracingCostUs };
}

function ratioRow(of: (operation: Operation) => Spread): Record<Operation, Spread> {
  return Object.fromEntries(OPERATIONS.map((operation) => [operation, of(operation)])) as Record<Operation, Spread>;
}

export type Summary = ReturnType<typeof summarize>;
