import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_KEYS_COLLECTION, createApiKeyStore } from '../src/auth/api-key-store.ts';
import type { Scope } from '../src/auth/scopes.ts';
import { sampleIn } from './support/metric-sample.ts';
import { type GraphQLResult, subscribeSse } from './support/sse.ts';
import { startTestServer, type TestServer } from './support/test-server.ts';
import { type RawSocket, rawSocket, wsClient, wsSubscribe } from './support/websocket.ts';

const PET_CREATED = 'subscription { petCreated { cursor pet { id } } }';
/** docs/keys-and-documents.md: a revoked key gets 401 within 5 s of the revocation. */
const REVOCATION_MS = 5_000;
const BEARER = (key: string) => ({ Authorization: `Bearer ${key}` });
const codeOf = (errors: unknown) => (errors as GraphQLResult['errors'])?.[0]?.extensions?.code;

async function issueKey(server: TestServer, scopes?: Scope[]): Promise<{ key: string; id: string }> {
  const { key, record } = await createApiKeyStore(server.database.db).issue({
    name: 'ws-revoked',
    allowArbitraryDocuments: true,
    ...(scopes ? { scopes } : {}),
  });
  await vi.waitFor(
    async () => expect((await server.request.get(`${server.restBasePath}/pets`).set(BEARER(key))).status).toBe(200),
    { timeout: 10_000, interval: 100 },
  );
  return { key, id: record.id };
}

const openStreams = async (server: TestServer) =>
  sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_open');

describe('a key revoked while its WebSocket is open', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  /** Sends `query` every 100 ms until one is refused or the socket closes: that `error` (if any), and when. */
  async function subscribeUntilRefused(raw: RawSocket, withinMs: number, query = '{ __typename }') {
    let attempt = 0;
    let closed = false;
    void raw.closed.then(() => {
      closed = true;
    });
    const answerOf = (n: number) => raw.messages.find((message) => message.id === `op-${n}` && message.type !== 'next');
    await vi.waitFor(
      () => {
        if (closed) return;
        if (attempt === 0 || answerOf(attempt)?.type === 'complete') {
          attempt++;
          raw.send({ id: `op-${attempt}`, type: 'subscribe', payload: { query } });
        }
        expect(answerOf(attempt)?.type).toBe('error');
      },
      { timeout: withinMs, interval: 100 },
    );
    const last = answerOf(attempt);
    return { refusal: last?.type === 'error' ? last : undefined, at: Date.now(), attempts: attempt };
  }

  it('revoked: the socket closes 4401 within 5 s of the revocation', async () => {
    const { key, id } = await issueKey(server);
    const raw = await rawSocket(server.baseUrl);
    await raw.init(BEARER(key));
    await createApiKeyStore(server.database.db).revoke(id);
    const revokedAt = performance.now();
    const closed = await raw.closed;
    expect(closed).toEqual({ code: 4401, reason: 'The API key was revoked' });
    expect(performance.now() - revokedAt).toBeLessThan(REVOCATION_MS);
  });

  it('expired while open: the next subscribe is refused UNAUTHENTICATED and the socket closes 4401', {
    timeout: 90_000,
  }, async () => {
    // Only between the expiry and the next key sync does the subscribe's own key check refuse: the
    // sync may close the idle socket first ('The API key expired'), so the case runs until it is seen.
    let refusalSeen = false;
    for (let round = 0; round < 5 && !refusalSeen; round++) {
      const { key, id } = await issueKey(server);
      const raw = await rawSocket(server.baseUrl);
      await raw.init(BEARER(key));
      const expiresAt = Date.now() + 3_000;
      await server.database.db
        .collection(API_KEYS_COLLECTION)
        .updateOne({ _id: id as never }, { $set: { expiresAt: new Date(expiresAt) } });
      const { refusal, at, attempts } = await subscribeUntilRefused(raw, 3_000 + REVOCATION_MS);
      expect(attempts).toBeGreaterThan(1);
      expect(at).toBeGreaterThanOrEqual(expiresAt);
      const closed = await raw.closed;
      expect(closed.code).toBe(4401);
      if (refusal) expect(codeOf(refusal.payload)).toBe('UNAUTHENTICATED');
      else expect(closed.reason).toBe('The API key expired');
      refusalSeen = refusal !== undefined;
    }
    expect(refusalSeen).toBe(true);
  });

  it('its open streams end at the key sync: SSE gets `complete`, the WebSocket closes 4401', async () => {
    const { key, id } = await issueKey(server);
    const closes: number[] = [];
    const client = wsClient(server.baseUrl, BEARER(key), closes);
    const overWs = wsSubscribe(client, { query: PET_CREATED });
    const overSse = await subscribeSse(server.baseUrl, { query: PET_CREATED, headers: BEARER(key) });
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(2), { timeout: 5_000, interval: 50 });
    await createApiKeyStore(server.database.db).revoke(id);
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), { timeout: REVOCATION_MS, interval: 50 });
    expect(await overWs.ended()).toBeDefined();
    expect(closes).toEqual([4401]);
    expect((await overSse.rest()).at(-1)?.event).toBe('complete');
    const scrape = await server.metrics.scrape.text();
    expect(sampleIn(scrape, 'graphql_subscriptions_ended_total', { reason: 'revoked' })).toBe(2);
    overSse.close();
    await client.dispose();
  });

  it('a scope taken away: the next subscribe that needs it is refused FORBIDDEN, the socket stays open', async () => {
    const store = createApiKeyStore(server.database.db);
    const { key, id } = await issueKey(server, ['pets:read', 'pets:write']);
    const raw = await rawSocket(server.baseUrl);
    await raw.init(BEARER(key));
    // The record narrowed in place (as an operator editing it would): the sync reads scopes with the rest.
    await server.database.db
      .collection(API_KEYS_COLLECTION)
      .updateOne({ _id: id as never }, { $set: { scopes: ['pets:write'] } });
    const { refusal } = await subscribeUntilRefused(raw, REVOCATION_MS, '{ pets(limit: 1) { id } }');
    expect(codeOf(refusal?.payload)).toBe('FORBIDDEN');
    await new Promise((turned) => setTimeout(turned, 100));
    expect(raw.socket.readyState).toBe(raw.socket.OPEN);
    await store.revoke(id);
    raw.socket.close();
  });
});
