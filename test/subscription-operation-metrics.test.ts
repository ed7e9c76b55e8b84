import { describe, expect, it, vi } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { createPetOverGraphQL } from './support/graphql-client.ts';
import { sampleIn } from './support/metric-sample.ts';
import { subscribeSse } from './support/sse.ts';
import { AUTH, OTHER_API_KEY, type TestServer, useTestServer } from './support/test-server.ts';
import { wsClient, wsSubscribe } from './support/websocket.ts';

const BEARER = (key: string) => ({ Authorization: `Bearer ${key}` });
const watch = (name: string) => `subscription ${name} { petCreated { cursor pet { id } } }`;

/** graphql_operations_total for one subscription operation and outcome. */
async function counted(server: TestServer, operation: string, outcome: 'success' | 'error'): Promise<number> {
  const text = await server.metrics.scrape.text();
  return sampleIn(text, 'graphql_operations_total', { operation, type: 'subscription', outcome });
}

const openStreams = async (server: TestServer) =>
  sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_open');

describe('subscriptions in graphql_operations_total', () => {
  // One stream per key: the second of a key is refused, an error counted at set-up.
  const server = useTestServer({ env: { MAX_SUBSCRIPTIONS_PER_KEY: '1' } });

  it('over SSE: counted once when the stream opens (not per event), an error when it is refused', async () => {
    const stream = await subscribeSse(server.baseUrl, { query: watch('WatchSse'), headers: AUTH });
    expect(stream.status).toBe(200);
    expect(await counted(server, 'WatchSse', 'success')).toBe(1);
    await createPetOverGraphQL(server, { name: 'counted-once-a', categoryId: 1 });
    await createPetOverGraphQL(server, { name: 'counted-once-b', categoryId: 1 });
    await stream.nextResult();
    await stream.nextResult();
    expect(await counted(server, 'WatchSse', 'success')).toBe(1);

    const refused = await subscribeSse(server.baseUrl, { query: watch('WatchSse'), headers: AUTH });
    expect(refused.status).toBe(429);
    refused.close();
    expect(await counted(server, 'WatchSse', 'error')).toBe(1);
    expect(await counted(server, 'WatchSse', 'success')).toBe(1);
    stream.close();
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), { timeout: 5_000, interval: 50 });
  });

  it('over WebSocket: counted when the stream opens, an error for a subscribe refused by the limit', async () => {
    const client = wsClient(server.baseUrl, BEARER(OTHER_API_KEY));
    const first = wsSubscribe(client, { query: watch('WatchWs') });
    await vi.waitFor(async () => expect(await counted(server, 'WatchWs', 'success')).toBe(1), { timeout: 5_000 });
    const second = wsSubscribe(client, { query: watch('WatchWs') });
    const errors = (await second.ended()) as { extensions?: { code?: string } }[];
    expect(errors[0]?.extensions?.code).toBe('TOO_MANY_SUBSCRIPTIONS');
    expect(await counted(server, 'WatchWs', 'error')).toBe(1);
    expect(await counted(server, 'WatchWs', 'success')).toBe(1);
    first.close();
    await client.dispose();
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), { timeout: 5_000, interval: 50 });
  });

  it('an anonymous subscription is counted as anonymous', async () => {
    const before = await counted(server, 'anonymous', 'success');
    const stream = await subscribeSse(server.baseUrl, {
      query: 'subscription { petCreated { cursor } }',
      headers: AUTH,
    });
    expect(stream.status).toBe(200);
    expect(await counted(server, 'anonymous', 'success')).toBe(before + 1);
    stream.close();
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), { timeout: 5_000, interval: 50 });
  });

  it('a subscription stopped by a later plugin (a key without pets:read) is counted as an error', async () => {
    const { key } = await createApiKeyStore(server.database.db).issue({
      name: 'write-only',
      allowArbitraryDocuments: true,
      scopes: ['pets:write'],
    });
    await vi.waitFor(
      // Known to the instance once it no longer answers 401.
      async () =>
        expect(
          (await server.request.post('/graphql').set(BEARER(key)).send({ query: '{ __typename }' })).status,
        ).not.toBe(401),
      { timeout: 10_000, interval: 100 },
    );
    const refused = await subscribeSse(server.baseUrl, { query: watch('WatchForbidden'), headers: BEARER(key) });
    expect(refused.status).toBe(403);
    refused.close();
    expect(await counted(server, 'WatchForbidden', 'error')).toBe(1);
    expect(await counted(server, 'WatchForbidden', 'success')).toBe(0);
  });

  it('a subscription that fails validation is counted once, as invalid, not again at set-up', async () => {
    const text = await server.metrics.scrape.text();
    const invalid = { operation: 'invalid', type: 'subscription', outcome: 'error' };
    const before = sampleIn(text, 'graphql_operations_total', invalid);
    const refused = await subscribeSse(server.baseUrl, { query: 'subscription WatchBad { nope }', headers: AUTH });
    // docs/api.md: a request error over SSE is a 200 stream of one `next` with the errors.
    expect(refused.status).toBe(200);
    expect((await refused.nextResult()).errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    refused.close();
    expect(sampleIn(await server.metrics.scrape.text(), 'graphql_operations_total', invalid)).toBe(before + 1);
    expect(await counted(server, 'WatchBad', 'error')).toBe(0);
  });
});
