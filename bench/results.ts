// bench/results/latest.json: everything the printed report came from, raw runs included, so a
// later reader can recompute any figure (bench/results/.gitignore keeps it out of commits).

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { CurvePoint, Threshold } from './cost-curve.ts';
import { type Ready, TARGETS, type TracingMode } from './protocol.ts';
import type { Settings } from './settings.ts';
import type { RoundRun, Summary } from './summary.ts';

/** One benchmark's outcome: what the report prints and the results file keeps. */
export interface Outcome {
  settings: Settings;
  ready: Ready;
  runs: RoundRun[];
  summary: Summary;
  costCurve?: { points: CurvePoint[]; thresholds: Threshold[] };
  serversRssBytes: { atReady: number; peak: number; atEnd: number };
  /** The tracing processes, when they ran: their RSS at ready, and what the sink received from all. */
  tracing?: { rssAtReady: Record<TracingMode, number>; exported: { requests: number; bytes: number } };
  loadAverage1m: { before: number; after: number };
  autocannonVersion: string;
  elapsedSeconds: number;
}

export function writeResults(outcome: Outcome): string {
  const file = fileURLToPath(new URL('./results/latest.json', import.meta.url));
  const { settings, ready, runs, summary, costCurve, ...rest } = outcome;
  const results = {
    generatedAt: new Date().toISOString(),
    note: 'Only ratios mean anything: load generator, servers and database share the machine. Ratios are medians of per-round ratios.',
    database: ready.database ?? null,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      totalMemoryBytes: totalmem(),
      node: process.version,
    },
    settings: {
      ...settings,
      loadGenerator: `autocannon ${outcome.autocannonVersion}, no workers, in a separate process from the servers`,
      targetOrder: TARGETS,
    },
    rows: summary.rows,
    ratios: summary.ratios,
    accessLogShare: summary.accessLogShare,
    redisLimiterCostUs: summary.redisLimiterCostUs,
    byIdCostUs: summary.byIdCostUs,
    tracingCostUs: summary.tracingCostUs,
    costCurve: costCurve ?? null,
    ...rest,
    runs,
  };
  mkdirSync(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return 'bench/results/latest.json';
}
