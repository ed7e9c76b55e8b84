// The printed tables. Plain text, fixed columns, so a run pastes into a review or docs/benchmarks.md as is.

import { cpus } from 'node:os';
import { CURVE_SIZES, type CurvePoint, GET_P99_LIMIT_MS, type Threshold } from './cost-curve.ts';
import type { StoreName } from './protocol.ts';
import type { Outcome } from './results.ts';
import { OPERATION_LABEL, OPERATIONS } from './scenarios.ts';
import { type RatioName, type Spread, type Summary, TRACED, type Traced } from './summary.ts';

export const STORE_LABEL: Record<StoreName, string> = { memory: 'in-memory store', ferretdb: 'FerretDB store' };

const MB = 1024 * 1024;
export const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;
const ms = (value: number) => (Number.isNaN(value) ? '-' : value < 10 ? value.toFixed(2) : value.toFixed(0));
const ratio = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(2));
const ranged = (value: Spread) =>
  Number.isNaN(value.median) ? '-' : `${ratio(value.median)} (${ratio(value.min)}-${ratio(value.max)})`;

/** Columns listed in `text` left-aligned, figures right-aligned. */
export function table(rows: string[][], text: number[]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => (text.includes(column) ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd();
  return rows.map(line).join('\n');
}

export function targetsTable(summary: Summary, store: StoreName): string {
  const rows = summary.rows.filter((row) => row.store === store);
  return table(
    [
      ['operation', 'target', 'req/s', 'p50 ms', 'p99 ms', 'vs floor', 'µs > floor', 'failed', 'request'],
      ...rows.map((row, index) => [
        index > 0 && rows[index - 1]!.operation === row.operation ? '' : OPERATION_LABEL[row.operation],
        row.target,
        row.requestsPerSecond.median.toFixed(0),
        ms(row.p50Ms.median),
        ms(row.p99Ms.median),
        ratio(row.vsFloor.median),
        row.target === 'floor' || Number.isNaN(row.usAboveFloor.median) ? '' : row.usAboveFloor.median.toFixed(0),
        String(row.failures),
        row.description,
      ]),
    ],
    [0, 1, 8],
  );
}

export function ratiosTable(summary: Summary, store: StoreName): string {
  const ratios = summary.ratios[store]!;
  return table(
    [
      ['ratio: median (min-max) of rounds', ...OPERATIONS.map((operation) => OPERATION_LABEL[operation])],
      ...(Object.keys(ratios) as RatioName[]).map((name) => [
        name,
        ...OPERATIONS.map((operation) => ranged(ratios[name][operation])),
      ]),
    ],
    [0],
  );
}

export function curveTable(points: CurvePoint[]): string {
  return table(
    [
      ['stored pets', 'operation', 'connections', 'req/s', 'p50 ms', 'p99 ms', 'requests'],
      ...points.map((point) => [
        point.pets.toLocaleString('en-US'),
        OPERATION_LABEL[point.operation],
        String(point.connections),
        point.requestsPerSecond.toFixed(1),
        ms(point.p50Ms),
        ms(point.p99Ms),
        String(point.requests),
      ]),
    ],
    [1],
  );
}

export function thresholdLines(thresholds: Threshold[]): string {
  const count = (pets: number | null) => (pets === null ? 'n/a' : pets.toLocaleString('en-US'));
  return thresholds
    .map(({ connections, pets, p50Pets, how }) => {
      const who = connections === 1 ? 'one client at a time' : `${connections} concurrent clients`;
      if (how === 'no data') return `  with ${who}: no get completed at one of the sizes; no threshold`;
      if (pets === null) return `  with ${who}: get p99 did not rise with the pet count; no threshold`;
      if (pets === 0)
        return `  with ${who}: get p99 is above ~${GET_P99_LIMIT_MS} ms at every size measured (the line crosses it at or below 0 pets)`;
      return (
        `  with ${who}: get p99 exceeds ~${GET_P99_LIMIT_MS} ms past ${count(pets)} stored pets ` +
        `(${how} linearly from the two sizes; p50 crosses it at ${count(p50Pets)})`
      );
    })
    .join('\n');
}

const us = (cost: Spread) =>
  Number.isNaN(cost.median) ? '-' : `${cost.median.toFixed(0)} µs (${cost.min.toFixed(0)} to ${cost.max.toFixed(0)})`;

/** What tracing adds to a get, per face and sampling, against the same service with tracing off. */
export function tracingLines(costs: Record<Traced, Spread> | undefined): string[] {
  if (!costs || TRACED.every((target) => Number.isNaN(costs[target].median))) return [];
  return [
    'tracing, get by id: more per request than the same service with tracing off, each alone in a process',
    `  (median, min to max over rounds; OTLP to a sink in the load generator): REST ${us(costs['rest-otel-0'])} ` +
      `at 0% sampling, ${us(costs['rest-otel-100'])} at 100%; GraphQL ${us(costs['graphql-otel-0'])} at 0%, ` +
      `${us(costs['graphql-otel-100'])} at 100%`,
    '',
  ];
}

/** The whole printed report: how it was measured, then per store, then the memory and the curve. */
export function renderReport(outcome: Outcome): string {
  const { settings, ready, summary, costCurve, serversRssBytes: rss, loadAverage1m } = outcome;
  const database = ready.database ? ` (${ready.database.label})` : '';
  const lines = [
    `petstore-gateway benchmark: ${settings.stores.map((store) => STORE_LABEL[store]).join(' and ')}${database}`,
    `Only the ratios mean anything: load generator, servers and database share this machine's ${cpus().length} cores.`,
    `autocannon ${outcome.autocannonVersion}, ${settings.connections} connections, ${settings.rounds} interleaved rounds ` +
      `of ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s per run, ${settings.seedPets} pets seeded, Node ${process.version}.`,
    'req/s and latencies: medians over rounds; "vs floor" and ratios: medians of the per-round ratios (not ratios of the medians);',
    '"µs > floor": the target\'s own time per request, 1e6/req/s minus the floor\'s in the same round, median over rounds.',
    `1-min load average ${loadAverage1m.before.toFixed(2)} before the run, ${loadAverage1m.after.toFixed(2)} after.`,
    '',
  ];
  for (const store of settings.stores) {
    lines.push(`== ${STORE_LABEL[store]} ==`, targetsTable(summary, store), '', ratiosTable(summary, store), '');
    const share = summary.accessLogShare[store];
    if (share && !Number.isNaN(share.median)) {
      const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
      lines.push(
        `access log at info (rest) against silent (rest-silent), share of a REST get: ${percent(share.median)} ` +
          `(${percent(share.min)} to ${percent(share.max)} over rounds; 1 - rest's req/s over rest-silent's)`,
        '',
      );
    }
    const cost = summary.redisLimiterCostUs[store];
    if (cost && !Number.isNaN(cost.median)) {
      lines.push(
        `rate limits in Redis (rest-redis) instead of memory (rest), get: ${cost.median.toFixed(0)} µs more per request ` +
          `(${cost.min.toFixed(0)} to ${cost.max.toFixed(0)} over rounds; 1 / req/s of each, ${settings.connections} connections, one process)`,
        '',
      );
    }
    const byId = summary.byIdCostUs[store];
    if (byId && !Number.isNaN(byId.get.median)) {
      lines.push(
        `by documentId (graphql-by-id) instead of the document sent whole (graphql), more per request: get ${us(byId.get)}, ` +
          `create ${us(byId.create)} (median, min to max over rounds; negative is less)`,
        '',
      );
    }
    lines.push(...tracingLines(summary.tracingCostUs[store]));
  }
  lines.push(
    `servers process (pid ${ready.pid}, every target but the tracing ones, of every store) RSS: ` +
      `${mb(rss.atReady)} at ready, ${mb(rss.peak)} peak, ${mb(rss.atEnd)} at the end`,
  );
  if (outcome.tracing) {
    const { rssAtReady, exported } = outcome.tracing;
    lines.push(
      `tracing processes RSS at ready: off ${mb(rssAtReady['otel-off'])}, 0% ${mb(rssAtReady['otel-0'])}, ` +
        `100% ${mb(rssAtReady['otel-100'])}; the sink received ${exported.requests} OTLP requests, ${mb(exported.bytes)}`,
    );
  }
  if (costCurve) {
    const through = `straight line through the medians at ${CURVE_SIZES.map((n) => n.toLocaleString('en-US')).join(' and ')} pets`;
    lines.push(
      '',
      "== FerretDB cost curve (floor target only: the database's own cost) ==",
      curveTable(costCurve.points),
      '',
    );
    lines.push(`THRESHOLD, get p99 > ~${GET_P99_LIMIT_MS} ms (${through}):`, thresholdLines(costCurve.thresholds));
  }
  return lines.join('\n');
}
