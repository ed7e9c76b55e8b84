// What the fan-out measurement found, for people: one row per step of the ladder, then the verdict.

import type { ServerMemory } from './fan-out-protocol.ts';
import type { FanOutSettings } from './fan-out-settings.ts';

/** One create, across every subscriber: ms from the create's send to each subscriber's read. */
export interface FanOutRound {
  p50: number;
  p99: number;
  max: number;
  /** ms from the create's send to its 201. */
  createMs: number;
  missing: number;
}

export interface FanOutStep {
  streams: number;
  opened: number;
  openSeconds: number;
  openFailures: Record<string, number>;
  rounds: FanOutRound[];
  /** Bytes per open stream, over the reading with none open (both after a full GC). */
  perStream: { rss: number; heap: number; external: number };
  atN: ServerMemory;
  /** After the streams closed (a full GC): heap back near the baseline, or a leak. */
  afterClose?: ServerMemory;
  /** Streams the server ended during the step. */
  ended: number;
  verdict: 'holds' | 'over the bound' | 'failed';
  why?: string;
}

export interface FanOutResult {
  settings: FanOutSettings;
  baseline: ServerMemory;
  steps: FanOutStep[];
  /** The lowest of the limits that cap the ladder, and which it is. */
  ceiling: { streams: number; by: string };
  stoppedBy: string;
  loadAverage1m: { before: number; after: number };
  node: string;
}

const mb = (bytes: number) => (bytes / 1_048_576).toFixed(0);
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 1 : 0) : '-');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? NaN;
const worst = (values: number[]) => (values.length === 0 ? NaN : Math.max(...values));

/** The largest step that held: every subscriber had every event within the bound, nothing failed. */
export function holds(result: FanOutResult): number {
  return Math.max(0, ...result.steps.filter((step) => step.verdict === 'holds').map((step) => step.streams));
}

function row(step: FanOutStep): string {
  const p = (pick: (round: FanOutRound) => number) => step.rounds.map(pick);
  const cells = [
    step.streams.toLocaleString('en'),
    step.openSeconds.toFixed(1),
    `${ms(median(p((r) => r.p50)))} / ${ms(median(p((r) => r.p99)))} / ${ms(median(p((r) => r.max)))}`,
    `${ms(worst(p((r) => r.p99)))} / ${ms(worst(p((r) => r.max)))}`,
    ms(median(p((r) => r.createMs))),
    `${kb(step.perStream.rss)} / ${kb(step.perStream.heap)}`,
    mb(step.atN.rss),
    mb(step.afterClose?.heapUsed ?? Number.NaN),
    String(step.atN.fds.open),
    step.why ? `${step.verdict}: ${step.why}` : step.verdict,
  ];
  return `  ${cells.map((cell, i) => cell.padStart(WIDTHS[i] ?? 0)).join('  ')}`;
}

const HEADERS = [
  'streams',
  'open s',
  'p50/p99/max ms (median)',
  'p99/max (worst)',
  'create ms',
  'KB/stream rss/heap',
  'rss MB at N',
  'heap MB closed',
  'fds',
  'result',
];
const WIDTHS = [8, 6, 24, 16, 9, 18, 11, 14, 6, 0];

export function renderFanOut(result: FanOutResult): string {
  const { settings, baseline } = result;
  return [
    `subscriptions fan-out: N open SSE streams on one instance (in-memory store), ${settings.rounds} creates per N over REST,`,
    `  ms from the create's send to each subscriber's read of the event; ${settings.clients} subscriber process(es); Node ${result.node}`,
    `  service at 0 streams (after GC): rss ${mb(baseline.rss)} MB, heap ${mb(baseline.heapUsed)} MB, ${baseline.fds.open} fds of ${baseline.fds.limit}`,
    `  ${HEADERS.map((header, i) => header.padStart(WIDTHS[i] ?? 0)).join('  ')}`,
    ...result.steps.map(row),
    `  one instance holds ${holds(result).toLocaleString('en')} subscribers with every event within ${settings.boundMs} ms (p99 of every create); ` +
      `ladder stopped by: ${result.stoppedBy}`,
    `  ceiling ${result.ceiling.streams.toLocaleString('en')} streams (${result.ceiling.by}); ` +
      `load average (1 min) ${result.loadAverage1m.before.toFixed(2)} before, ${result.loadAverage1m.after.toFixed(2)} after`,
  ].join('\n');
}
