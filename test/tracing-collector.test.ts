// End to end, as operators run it: the compiled service started with the standard OTEL_* variables,
// exporting over OTLP/HTTP to a real OpenTelemetry Collector (tools/otelcol), which prints every span
// it received; what it printed is what this reads.
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACING_FLUSH_DEADLINE_MS } from '../src/telemetry/settings.ts';
import { createPetAt } from './support/create-pet-at.ts';
import { type CollectedSpan, type Collector, OTEL_COLLECTOR, startCollector } from './support/otel-collector.ts';
import { requiring } from './support/required-tools.ts';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import { logEntries, type ServiceProcess } from './support/service-process.ts';
import { percentile, send } from './support/steady-load.ts';
import { AUTH, uniqueDbName } from './support/test-server.ts';

const needs = requiring(OTEL_COLLECTOR);
let collector: Collector;
let service: ServiceProcess;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
/** A caller's W3C trace context: its trace id and its own (client) span id, sampled. */
function callerContext() {
  const traceId = hex(16);
  const parentId = hex(8);
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
}

/** The server span ends last (after its response), so it may come in a later export than the rest. */
const complete = (spans: CollectedSpan[]) =>
  spans.some((span) => span.kind === 'Server') && spans.some((span) => span.kind === 'Client');

/** The chain of names from `span` up to the trace's root, through the parent ids. */
function ancestry(span: CollectedSpan, spans: CollectedSpan[]): CollectedSpan[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  const chain: CollectedSpan[] = [];
  for (let at = byId.get(span.parentSpanId); at; at = byId.get(at.parentSpanId)) chain.push(at);
  return chain;
}

/** What the service has logged so far. */
const logLines = () => logEntries<{ msg?: string; trace_id?: string; url?: string }>(service.log);

beforeAll(async () => {
  if (needs.skip) return;
  collector = await startCollector();
  service = await startServiceOnRunDatabase({
    dbName: uniqueDbName('tracing-e2e'),
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      RATE_LIMIT_PER_KEY: '100000',
      RATE_LIMIT_BURST: '100000',
    },
  });
}, 240_000);

afterAll(async () => {
  await service?.stop();
  collector?.thaw();
  await collector?.stop();
});

describe.skipIf(needs.skip)(needs.title('traces exported to a real OpenTelemetry Collector'), () => {
  let petId: number;

  beforeAll(async () => {
    petId = await createPetAt(service.origin, AUTH, 'Traced');
  });

  it('a REST get sent with its own traceparent is one trace under the caller: route, execute, MongoDB', async () => {
    const caller = callerContext();
    const response = await fetch(`${service.origin}/v1/pets/${petId}`, {
      headers: { ...AUTH, traceparent: caller.traceparent },
    });
    expect(response.status).toBe(200);
    const inTrace = (spans: CollectedSpan[]) => spans.filter((span) => span.traceId === caller.traceId);
    const spans = inTrace(await collector.waitForSpans((all) => complete(inTrace(all))));

    const server = spans.find((span) => span.kind === 'Server');
    expect(server).toMatchObject({ name: 'GET /v1/pets/{petId}', parentSpanId: caller.parentId });
    expect(server?.attributes['http.route']).toBe('/v1/pets/{petId}');
    const execute = spans.find((span) => span.name === 'graphql.execute');
    expect(ancestry(execute as CollectedSpan, spans)).toContain(server);
    const mongo = spans.find((span) => span.kind === 'Client' && span.attributes['db.system.name'] === 'mongodb');
    expect(ancestry(mongo as CollectedSpan, spans)).toContain(execute);
    // Command shape only: the statement names the filter's fields, never the pet's id.
    const statement = String(mongo?.attributes['db.query.text'] ?? mongo?.attributes['db.statement'] ?? '');
    expect(statement).toContain('_id');
    expect(statement).not.toMatch(new RegExp(`\\b${petId}\\b`));
    console.info(`REST get's database span: ${JSON.stringify(mongo?.attributes)}`);
    // Log lines are written in batches, at least every 100 ms.
    const accessLine = () =>
      logLines().find((line) => line.url === `/v1/pets/${petId}` && line.trace_id === caller.traceId);
    await expect.poll(accessLine, { message: 'the access-log line carries the caller trace id' }).toBeDefined();
    const path = [mongo, ...ancestry(mongo as CollectedSpan, spans)].map((span) => span?.name).join(' < ');
    console.info(`REST get, as the Collector received it (child to root): ${path}`);
  });

  it('a GraphQL query sent with its own traceparent is one trace: POST /graphql, parse, validate, execute, MongoDB', async () => {
    const caller = callerContext();
    const response = await fetch(`${service.origin}/graphql`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json', traceparent: caller.traceparent },
      body: JSON.stringify({
        query: 'query OnePet($id: ID!) { pet(id: $id) { id name } }',
        variables: { id: String(petId) },
      }),
    });
    expect(response.status).toBe(200);
    const inTrace = (spans: CollectedSpan[]) => spans.filter((span) => span.traceId === caller.traceId);
    const spans = inTrace(await collector.waitForSpans((all) => complete(inTrace(all))));

    const server = spans.find((span) => span.kind === 'Server');
    expect(server).toMatchObject({ name: 'POST /graphql', parentSpanId: caller.parentId });
    expect(spans.map((span) => span.name)).toEqual(
      expect.arrayContaining(['graphql.parse', 'graphql.validate', 'graphql.execute']),
    );
    const execute = spans.find((span) => span.name === 'graphql.execute') as CollectedSpan;
    expect(execute.attributes).toMatchObject({ 'graphql.operation.name': 'OnePet', 'graphql.operation.type': 'query' });
    expect(ancestry(execute, spans)).toContain(server);
    const mongo = spans.find(
      (span) => span.kind === 'Client' && span.attributes['db.system.name'] === 'mongodb',
    ) as CollectedSpan;
    expect(ancestry(mongo, spans)).toContain(execute);
    await expect.poll(() => logLines().some((line) => line.trace_id === caller.traceId)).toBe(true);
  });

  it('a frozen Collector costs no request more than a few milliseconds, and does not hold the drain', {
    timeout: 60_000,
  }, async () => {
    const agent = new Agent({ keepAlive: true });
    const timesOf = async (count: number) => {
      const ms: number[] = [];
      for (let i = 0; i < count; i++) {
        const outcome = await send(service.origin, agent, { method: 'GET', path: `/v1/pets/${petId}`, headers: AUTH });
        expect(outcome.status).toBe(200);
        ms.push(outcome.ms);
      }
      return ms;
    };
    const running = await timesOf(200);
    await collector.freeze();
    // Past a few of the SDK's 100 ms batch exports, each now waiting on a Collector that never answers.
    const frozen = await timesOf(200);
    agent.destroy();
    const [p50Running, p99Running, p50Frozen, p99Frozen] = [
      percentile(running, 50),
      percentile(running, 99),
      percentile(frozen, 50),
      percentile(frozen, 99),
    ];
    const stoppedAt = performance.now();
    const code = await service.stop('SIGTERM');
    const stopMs = performance.now() - stoppedAt;
    console.info(
      `Collector frozen: get p50 ${p50Frozen.toFixed(1)} ms / p99 ${p99Frozen.toFixed(1)} ms (running: ${p50Running.toFixed(1)} / ${p99Running.toFixed(1)}); SIGTERM to exit ${Math.round(stopMs)} ms`,
    );
    expect(p50Frozen - p50Running).toBeLessThan(5);
    expect(p99Frozen).toBeLessThan(p99Running + 25);
    expect(code).toBe(0);
    // The drain's own work plus the flush deadline, not the exporter's 10 s timeout.
    expect(stopMs).toBeLessThan(TRACING_FLUSH_DEADLINE_MS + 3_000);
  });
});
