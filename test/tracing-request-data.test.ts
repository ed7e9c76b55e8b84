// Spans hold no request data: the compiled service, traced to a real OpenTelemetry Collector, is sent
// GraphQL documents and variables in the query string and forged client addresses; what the Collector
// received is read back.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectedSpan, type Collector, OTEL_COLLECTOR, startCollector } from './support/otel-collector.ts';
import { requiring } from './support/required-tools.ts';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { AUTH, uniqueDbName } from './support/test-server.ts';

const needs = requiring(OTEL_COLLECTOR);
let collector: Collector;
/** One service as deployed without TRUST_PROXY, one behind a proxy on loopback (TRUST_PROXY=loopback). */
let direct: ServiceProcess;
let behindProxy: ServiceProcess;

const FORGED = '203.0.113.9';

function startTraced(env: Record<string, string>): Promise<ServiceProcess> {
  return startServiceOnRunDatabase({
    dbName: uniqueDbName('tracing-data'),
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100', ...env },
  });
}

beforeAll(async () => {
  if (needs.skip) return;
  collector = await startCollector();
  [direct, behindProxy] = await Promise.all([startTraced({}), startTraced({ TRUST_PROXY: 'loopback' })]);
}, 240_000);

afterAll(async () => {
  await direct?.stop();
  await behindProxy?.stop();
  await collector?.stop();
});

/** Sends `path` with a fresh trace id and resolves with that trace's spans once its server span arrived. */
async function traced(service: ServiceProcess, path: string, headers: Record<string, string> = {}) {
  const traceId = randomBytes(16).toString('hex');
  const response = await fetch(`${service.origin}${path}`, {
    headers: { ...AUTH, ...headers, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
  });
  await response.arrayBuffer();
  const inTrace = (spans: CollectedSpan[]) => spans.filter((span) => span.traceId === traceId);
  const spans = inTrace(await collector.waitForSpans((all) => inTrace(all).some((span) => span.kind === 'Server')));
  return { status: response.status, spans, server: spans.find((span) => span.kind === 'Server') as CollectedSpan };
}

describe.skipIf(needs.skip)(needs.title('spans exported to a real Collector hold no request data'), () => {
  it('a GET /graphql span keeps its route but has no url.query: neither document nor variables anywhere', async () => {
    const secret = `secret-${randomBytes(6).toString('hex')}`;
    const document = `query Secretive($name: String) { pets(limit: 1) { id name } }`;
    const query = new URLSearchParams({ query: document, variables: JSON.stringify({ name: secret }) });
    const { status, spans, server } = await traced(direct, `/graphql?${query}`);

    expect(status).toBe(200);
    expect(server.name).toBe('GET /graphql');
    expect(server.attributes).toMatchObject({ 'http.route': '/graphql', 'url.path': '/graphql' });
    expect(server.attributes).not.toHaveProperty('url.query');
    expect(spans.length).toBeGreaterThan(1);
    const everything = JSON.stringify(spans.map(({ name, attributes, events }) => ({ name, attributes, events })));
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain('pets(limit');
    expect(everything).not.toContain(encodeURIComponent(secret));
  });

  it('a REST list keeps its url.query: paging and filters, never a document', async () => {
    const { status, server } = await traced(direct, '/v1/pets?limit=2');
    expect(status).toBe(200);
    expect(server.attributes['url.query']).toBe('limit=2');
  });

  it('without TRUST_PROXY, client.address is the socket peer whatever X-Forwarded-For or Forwarded say', async () => {
    const forwardedFor = await traced(direct, '/v1/pets', { 'X-Forwarded-For': FORGED });
    expect(forwardedFor.server.attributes['client.address']).toBe('127.0.0.1');
    const forwarded = await traced(direct, '/v1/pets', { Forwarded: `for=${FORGED}` });
    expect(forwarded.server.attributes['client.address']).toBe('127.0.0.1');
    // Refused requests are the ones whose source matters most.
    const refused = await traced(direct, '/v1/pets', {
      'X-Forwarded-For': FORGED,
      Authorization: 'Bearer wrong-key-0000000000',
    });
    expect(refused.status).toBe(401);
    expect(refused.server.attributes['client.address']).toBe('127.0.0.1');
  });

  it('with TRUST_PROXY=loopback, client.address is the address the trusted proxy forwarded', async () => {
    const { server } = await traced(behindProxy, '/v1/pets', { 'X-Forwarded-For': FORGED });
    expect(server.attributes['client.address']).toBe(FORGED);
    // Forwarded is not what TRUST_PROXY reads (proxy-addr: X-Forwarded-For only): the peer, not its claim.
    const forwarded = await traced(behindProxy, '/v1/pets', { Forwarded: `for=${FORGED}` });
    expect(forwarded.server.attributes['client.address']).toBe('127.0.0.1');
  });
});
