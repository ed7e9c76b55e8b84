import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_KEYS_COLLECTION, createApiKeyStore } from '../src/auth/api-key-store.ts';
import { ISSUED_KEYS_REFRESH_MS } from '../src/auth/api-keys.ts';
import { createPetOverGraphQL } from './support/graphql-client.ts';
import { sampleIn } from './support/metric-sample.ts';
import { type SseStream, subscribeSse } from './support/sse.ts';
import { startTestServer, type TestServer } from './support/test-server.ts';
import { rawSocket } from './support/websocket.ts';

const PET_CREATED = 'subscription { petCreated { cursor pet { id name } } }';
const BEARER = (key: string) => ({ Authorization: `Bearer ${key}` });
const DAY_MS = 86_400_000;
/** Time to issue the key, let the sync pick it up, and open its streams before it expires. */
const EXPIRES_IN_MS = 7_000;
/** A sync is ISSUED_KEYS_REFRESH_MS after the end of the last one, plus its read of the collection. */
const SYNC_SLACK_MS = 1_500;

describe('an issued key that expires while its streams are open', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  /** An issued key expiring at `expiresAt` (null: never), once the service accepts it. */
  async function issueKey(name: string, expiresAt: number | null) {
    const store = createApiKeyStore(server.database.db);
    // expiresInDays counts from `now`: a day before the wanted expiry gives that expiry.
    const timing = expiresAt === null ? {} : { expiresInDays: 1, now: new Date(expiresAt - DAY_MS) };
    const { key, record } = await store.issue({ name, allowArbitraryDocuments: true, ...timing });
    return { key, id: record.id };
  }

  const worksNow = async (key: string) =>
    vi.waitFor(
      async () => expect((await server.request.get(`${server.restBasePath}/pets`).set(BEARER(key))).status).toBe(200),
      { timeout: 10_000, interval: 100 },
    );

  const metric = async (name: string, labels: Record<string, string> = {}) =>
    sampleIn(await server.metrics.scrape.text(), name, labels);

  it('ends its SSE and WebSocket streams within a key sync of its expiry; other keys keep theirs', async () => {
    const expiresAt = Date.now() + EXPIRES_IN_MS;
    const expiring = await issueKey('expiring', expiresAt);
    const lasting = await issueKey('lasting', null);
    // Issued with the same expiry, then extended before it: the sync must read the later one.
    const extended = await issueKey('extended', expiresAt);
    await server.database.db
      .collection(API_KEYS_COLLECTION)
      .updateOne({ _id: extended.id as never }, { $set: { expiresAt: new Date(expiresAt + 60_000) } });
    for (const { key } of [expiring, lasting, extended]) await worksNow(key);

    const sse = await subscribeSse(server.baseUrl, { query: PET_CREATED, headers: BEARER(expiring.key) });
    const raw = await rawSocket(server.baseUrl);
    await raw.init(BEARER(expiring.key));
    raw.send({ id: 'watch', type: 'subscribe', payload: { query: PET_CREATED } });
    const kept: SseStream[] = [];
    for (const { key } of [lasting, extended]) {
      kept.push(await subscribeSse(server.baseUrl, { query: PET_CREATED, headers: BEARER(key) }));
    }
    await vi.waitFor(async () => expect(await metric('graphql_subscriptions_open')).toBe(4), { timeout: 5_000 });
    expect(Date.now()).toBeLessThan(expiresAt);

    const closed = await raw.closed;
    const closedAt = Date.now();
    expect(closed).toEqual({ code: 4401, reason: 'The API key expired' });
    expect(closedAt).toBeGreaterThanOrEqual(expiresAt);
    expect(closedAt - expiresAt).toBeLessThan(ISSUED_KEYS_REFRESH_MS + SYNC_SLACK_MS);
    expect((await sse.rest(SYNC_SLACK_MS)).at(-1)?.event).toBe('complete');

    await vi.waitFor(async () => expect(await metric('graphql_subscriptions_open')).toBe(2), { timeout: 1_000 });
    expect(await metric('graphql_subscriptions_ended_total', { reason: 'expired' })).toBe(2);
    expect(await metric('graphql_subscriptions_ended_total', { reason: 'revoked' })).toBe(0);

    // The keys that did not expire still get events on the streams they opened before.
    await createPetOverGraphQL(server, { name: 'after-expiry', categoryId: 1 });
    for (const stream of kept) {
      const { data } = await stream.nextResult();
      expect(data?.petCreated).toMatchObject({ pet: { name: 'after-expiry' } });
    }
    for (const stream of kept) stream.close();
  });
});
