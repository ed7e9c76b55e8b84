import { describe, expect, it } from 'vitest';
import { configuredKeyId } from '../src/auth/api-keys.ts';
import { executeGraphQL } from './support/graphql-client.ts';
import { sampleIn } from './support/metric-sample.ts';
import { restClient } from './support/rest-client.ts';
import { API_KEY, AUTH, listenOnLoopback, startTestServer, useTestServer } from './support/test-server.ts';

const server = useTestServer();
const rest = restClient(server);

async function scrape(): Promise<string> {
  const response = await server.request.get('/metrics').set(AUTH);
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text;
}

describe('GET /metrics', () => {
  it('needs the API key like any other route', async () => {
    const response = await server.request.get('/metrics');
    expect(response.status).toBe(401);
  });

  it('shows a request that was just made, by route template, method and status', async () => {
    const labels = { route: '/v1/pets/{petId}', method: 'GET', status: '404' };
    const before = sampleIn(await scrape(), 'http_request_duration_seconds_count', labels);
    expect((await rest.getPet(987_654_321)).status).toBe(404);
    await expect
      .poll(async () => sampleIn(await scrape(), 'http_request_duration_seconds_count', labels))
      .toBe(before + 1);
    const text = await scrape();
    expect(sampleIn(text, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(before + 1);
    // The raw path never becomes a label, whatever clients send.
    expect(text).not.toContain('/v1/pets/987654321');
  });

  it('counts GraphQL operations by name, type and outcome', async () => {
    await executeGraphQL(server, 'query CountMe { pets(limit: 1) { id } }');
    await executeGraphQL(server, 'query CountMe { pets(limit: 0) { id } }');
    await executeGraphQL(server, 'query Broken { nope }');
    const text = await scrape();
    expect(
      sampleIn(text, 'graphql_operations_total', { operation: 'CountMe', type: 'query', outcome: 'success' }),
    ).toBe(1);
    expect(sampleIn(text, 'graphql_operations_total', { operation: 'CountMe', type: 'query', outcome: 'error' })).toBe(
      1,
    );
    // Names of documents that fail validation are not labels: clients could fill the memory with them.
    expect(sampleIn(text, 'graphql_operations_total', { operation: 'invalid', type: 'query', outcome: 'error' })).toBe(
      1,
    );
    expect(text).not.toContain('Broken');
    // An over-long name counts, but as "other": labels are kept in memory and sent on every scrape.
    const longName = `Q${'x'.repeat(64)}`;
    await executeGraphQL(server, `query ${longName} { pets(limit: 1) { id } }`);
    const after = await scrape();
    expect(after).not.toContain(longName);
    expect(sampleIn(after, 'graphql_operations_total', { operation: 'other', outcome: 'success' })).toBe(1);
  });

  it('counts uses of the deprecated route by key id, and failed authentications, and never shows a key', async () => {
    await rest.getPet(1);
    await server.request.get('/v1/pets').set({ Authorization: 'Bearer not-a-key-at-all-000' });
    const text = await scrape();
    const keyId = configuredKeyId(API_KEY);
    expect(
      sampleIn(text, 'deprecated_operation_requests_total', { operation: 'getPet', key_id: keyId }),
    ).toBeGreaterThan(0);
    expect(sampleIn(text, 'authentication_failures_total', { reason: 'invalid' })).toBeGreaterThan(0);
    expect(text).not.toContain(API_KEY);
  });

  it('shows the connection pool and the Node process', async () => {
    await rest.listPets();
    const text = await scrape();
    expect(text).toContain('# TYPE mongodb_pool_connections_in_use gauge');
    expect(sampleIn(text, 'mongodb_pool_connections')).toBeGreaterThan(0);
    expect(sampleIn(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
  });

  it('says whether rate limits count in Redis: without REDIS_URL, never (each instance counts alone)', async () => {
    const text = await scrape();
    expect(text).toContain('# TYPE rate_limit_store_shared gauge');
    expect(text).toContain('# TYPE rate_limit_store_fallbacks_total counter');
    expect(sampleIn(text, 'rate_limit_store_shared')).toBe(0);
    // Counting in memory by configuration is no fallback.
    expect(sampleIn(text, 'rate_limit_store_fallbacks_total')).toBe(0);
  });

  it('counts requests refused by a rate limit', async () => {
    const limited = await startTestServer({
      rateLimits: { perKey: { rate: 1, burst: 1 }, authFailures: { rate: 100, burst: 100 } },
    });
    try {
      let status = 0;
      for (let i = 0; i < 5 && status !== 429; i++) status = (await limited.request.get('/v1/pets').set(AUTH)).status;
      expect(status).toBe(429);
      const { http, baseUrl } = await listenOnLoopback(limited.service.metricsListener);
      const text = await (await fetch(`${baseUrl}/metrics`)).text();
      http.close();
      expect(sampleIn(text, 'rate_limited_requests_total', { limit: 'per_key' })).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});

describe('/metrics on its own port (METRICS_PORT)', () => {
  it('answers without a key there, 404 elsewhere on that port, and 404 on the API port', async () => {
    const separate = await startTestServer({ metricsOnMainPort: false });
    const { http, baseUrl } = await listenOnLoopback(separate.service.metricsListener);
    try {
      const scraped = await fetch(`${baseUrl}/metrics`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('http_request_duration_seconds');
      expect((await fetch(`${baseUrl}/v1/pets`)).status).toBe(404);
      const onApiPort = await separate.request.get('/metrics').set(AUTH);
      expect(onApiPort.status).toBe(404);
      expect(onApiPort.body).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
    } finally {
      http.close();
      await separate.close();
    }
  });
});
