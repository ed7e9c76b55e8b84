// The real OpenTelemetry Collector the tracing tests read their spans from (tools/otelcol, started by
// test/support/otel-collector.ts), checked on its own, without the service's tracing: one OTLP/HTTP
// JSON request of two spans must come back parsed with their ids, parent, kinds, status and attributes.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CollectedSpan,
  type Collector,
  OTEL_COLLECTOR,
  parseDebugOutput,
  startCollector,
} from './support/otel-collector.ts';
import { requiring } from './support/required-tools.ts';

/** A first build here (2 cores, modules downloaded) takes about a minute; CI builds it in its own step. */
const BUILD_DEADLINE_MS = 170_000;
const needs = requiring(OTEL_COLLECTOR);

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

interface Ids {
  traceId: string;
  parentId: string;
  childId: string;
}

/** One OTLP/JSON export request: a server span and a client span below it that failed. */
function exportRequest({ traceId, parentId, childId }: Ids) {
  const startNs = BigInt(Date.now()) * 1_000_000n;
  return {
    resourceSpans: [
      {
        resource: { attributes: [str('service.name', 'otel-collector-test')] },
        scopeSpans: [
          {
            scope: { name: 'petstore-gateway-test', version: '1.2.3' },
            spans: [
              {
                traceId,
                spanId: parentId,
                name: 'GET /v1/pets/{petId}',
                kind: 2, // SPAN_KIND_SERVER
                startTimeUnixNano: String(startNs),
                endTimeUnixNano: String(startNs + 12_500_000n),
                attributes: [
                  str('http.route', '/v1/pets/{petId}'),
                  { key: 'http.response.status_code', value: { intValue: '200' } },
                  { key: 'retried', value: { boolValue: false } },
                ],
                status: {},
              },
              {
                traceId,
                spanId: childId,
                parentSpanId: parentId,
                name: 'mongodb.find',
                kind: 3, // SPAN_KIND_CLIENT
                startTimeUnixNano: String(startNs + 1_000_000n),
                endTimeUnixNano: String(startNs + 11_000_000n),
                attributes: [
                  str('db.system', 'mongodb'),
                  str('db.statement', 'first line\nsecond line)'),
                  { key: 'db.ratio', value: { doubleValue: 0.25 } },
                  { key: 'db.names', value: { arrayValue: { values: [{ stringValue: 'pets' }, { intValue: '7' }] } } },
                ],
                events: [
                  {
                    name: 'exception',
                    timeUnixNano: String(startNs + 10_000_000n),
                    attributes: [str('exception.type', 'MongoServerError'), str('exception.message', 'boom')],
                  },
                ],
                status: { code: 2, message: 'boom' }, // STATUS_CODE_ERROR
              },
            ],
          },
        ],
      },
    ],
  };
}

async function post(collector: Collector, body: unknown, signal?: AbortSignal): Promise<number> {
  const response = await fetch(collector.tracesUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  await response.text();
  return response.status;
}

const ofTrace = (traceId: string, count: number) => (spans: CollectedSpan[]) =>
  spans.filter((span) => span.traceId === traceId).length >= count;

const processGone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
};

describe.skipIf(needs.skip)(needs.title('a real OpenTelemetry Collector (tools/otelcol)'), () => {
  let collector: Collector;

  beforeAll(async () => {
    collector = await startCollector({ buildTimeoutMs: BUILD_DEADLINE_MS, log: (line) => console.log(line) });
  }, BUILD_DEADLINE_MS + 10_000);

  afterAll(async () => {
    await collector?.stop();
  });

  it('reads back a parent and a child span posted as OTLP/HTTP JSON, with ids, kinds, status and attributes', async () => {
    const ids = { traceId: hex(16), parentId: hex(8), childId: hex(8) };
    expect(collector.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await post(collector, exportRequest(ids))).toBe(200);

    const spans = (await collector.waitForSpans(ofTrace(ids.traceId, 2))).filter((s) => s.traceId === ids.traceId);
    const parent = spans.find((span) => span.spanId === ids.parentId);
    const child = spans.find((span) => span.spanId === ids.childId);
    expect(parent).toMatchObject({
      traceId: ids.traceId,
      parentSpanId: '',
      name: 'GET /v1/pets/{petId}',
      kind: 'Server',
      status: { code: 'Unset', message: '' },
      attributes: { 'http.route': '/v1/pets/{petId}', 'http.response.status_code': 200, retried: false },
      resource: { 'service.name': 'otel-collector-test' },
      scope: { name: 'petstore-gateway-test', version: '1.2.3' },
      events: [],
    });
    expect(parent?.durationMs).toBeCloseTo(12.5, 6);
    expect(child).toMatchObject({
      traceId: ids.traceId,
      parentSpanId: ids.parentId,
      name: 'mongodb.find',
      kind: 'Client',
      status: { code: 'Error', message: 'boom' },
      attributes: {
        'db.system': 'mongodb',
        'db.statement': 'first line\nsecond line)',
        'db.ratio': 0.25,
        'db.names': ['pets', 7],
      },
      events: [
        { name: 'exception', attributes: { 'exception.type': 'MongoServerError', 'exception.message': 'boom' } },
      ],
    });
    expect(child?.durationMs).toBeCloseTo(10, 6);
  });

  it('runs beside a second Collector on ports of its own; stop ends the process', async () => {
    const second = await startCollector({ buildTimeoutMs: BUILD_DEADLINE_MS });
    try {
      expect(second.endpoint).not.toBe(collector.endpoint);
      const ids = { traceId: hex(16), parentId: hex(8), childId: hex(8) };
      expect(await post(second, exportRequest(ids))).toBe(200);
      await second.waitForSpans(ofTrace(ids.traceId, 2));
      expect(collector.spans().filter((span) => span.traceId === ids.traceId)).toEqual([]);
    } finally {
      await second.stop();
    }
    expect(processGone(second.pid)).toBe(true);
  });

  it('frozen, it takes the connection and answers nothing; thawed, it answers again', async () => {
    await collector.freeze();
    try {
      const frozen = { traceId: hex(16), parentId: hex(8), childId: hex(8) };
      const started = Date.now();
      await expect(post(collector, exportRequest(frozen), AbortSignal.timeout(500))).rejects.toThrow();
      expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    } finally {
      collector.thaw();
    }
    const ids = { traceId: hex(16), parentId: hex(8), childId: hex(8) };
    expect(await post(collector, exportRequest(ids))).toBe(200);
    await collector.waitForSpans(ofTrace(ids.traceId, 2));
  });
});

describe("the debug exporter's detailed text", () => {
  it('is read in the layout of older Collectors too: internal logger prefix, SPAN_KIND_*, no dropped counts', () => {
    const text = [
      '2024-03-01T10:00:00.000Z\tinfo\tTracesExporter\t{"kind": "exporter", "resource spans": 1, "spans": 1}',
      '2024-03-01T10:00:00.000Z\tinfo\tResourceSpans #0',
      'Resource SchemaURL: ',
      'Resource attributes:',
      '     -> service.name: Str(old)',
      'Resource entity refs:',
      '     -> Entity ref #0:',
      '          -> Type: service',
      'ScopeSpans #0',
      'ScopeSpans SchemaURL: ',
      'InstrumentationScope  ',
      'Span #0',
      '    Trace ID       : 0102030405060708090a0b0c0d0e0f10',
      '    Parent ID      : ',
      '    ID             : 1112131415161718',
      '    Name           : POST /graphql',
      '    Kind           : SPAN_KIND_SERVER',
      '    Start time     : 2020-02-11 20:26:12.000000321 +0000 UTC',
      '    End time       : 2020-02-11 20:26:13.000000789 +0000 UTC',
      '    Status code    : STATUS_CODE_ERROR',
      '    Status message : status-cancelled',
      'Attributes:',
      '     -> graphql.operation.name: Str(PetById)',
      '     -> empty: Empty()',
      'Links:',
      'SpanLink #0',
      '     -> Trace ID: 0102030405060708090a0b0c0d0e0f10',
      '     -> Attributes::',
      '          -> link-attr: Str(not a span attribute)',
      '\t{"kind": "exporter", "data_type": "traces", "name": "debug"}',
    ].join('\n');
    const [span, ...rest] = parseDebugOutput(text);
    expect(rest).toEqual([]);
    expect(span).toEqual({
      traceId: '0102030405060708090a0b0c0d0e0f10',
      spanId: '1112131415161718',
      parentSpanId: '',
      name: 'POST /graphql',
      kind: 'Server',
      traceState: '',
      status: { code: 'Error', message: 'status-cancelled' },
      attributes: { 'graphql.operation.name': 'PetById', empty: null },
      resource: { 'service.name': 'old' },
      scope: { name: '', version: '' },
      events: [],
      startTime: '2020-02-11 20:26:12.000000321 +0000 UTC',
      endTime: '2020-02-11 20:26:13.000000789 +0000 UTC',
      durationMs: expect.closeTo(1000.000468, 6),
    });
  });
});
