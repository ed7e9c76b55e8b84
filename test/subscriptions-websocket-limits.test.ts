import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sampleIn } from './support/metric-sample.ts';
import { API_KEY, OTHER_API_KEY, startTestServer, type TestServer } from './support/test-server.ts';
import { type RawSocket, rawSocket, upgradeStatus } from './support/websocket.ts';

const PET_CREATED = 'subscription { petCreated { cursor pet { id } } }';
const BEARER = (key: string) => ({ Authorization: `Bearer ${key}` });
const WAIT = { timeout: 5_000, interval: 50 };

const openStreams = async (server: TestServer) =>
  sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_open');

async function closeAll(sockets: RawSocket[]): Promise<void> {
  for (const raw of sockets) raw.socket.close();
  await Promise.all(sockets.map((raw) => raw.closed));
  // The server's side of each close is seen a moment later.
  await new Promise((turned) => setTimeout(turned, 100));
}

/** Settles with how the socket closed, or 'open' if it is still open after `withinMs`. */
const closedWithin = (raw: RawSocket, withinMs: number) =>
  Promise.race([raw.closed, new Promise<'open'>((still) => setTimeout(still, withinMs, 'open'))]);

describe('WebSocket connection limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      maxGraphQLBodyBytes: 4_096,
      env: { MAX_SUBSCRIPTIONS_PER_KEY: '2', MAX_SUBSCRIPTIONS: '4', MAX_PENDING_WEBSOCKETS: '2' },
    });
  });
  afterAll(() => server.close());

  it('a key holds at most MAX_SUBSCRIPTIONS_PER_KEY acknowledged connections: the next closes 4429, another key is served', async () => {
    const held = [await rawSocket(server.baseUrl), await rawSocket(server.baseUrl)];
    for (const raw of held) await raw.init(BEARER(API_KEY));
    const third = await rawSocket(server.baseUrl);
    third.send({ type: 'connection_init', payload: BEARER(API_KEY) });
    const refused = await third.closed;
    expect(refused.code).toBe(4429);
    expect(refused.reason).toMatch(/Too many WebSocket connections for this API key \(2 on this instance\)/);
    const other = await rawSocket(server.baseUrl);
    await other.init(BEARER(OTHER_API_KEY));
    await closeAll([held[0] as RawSocket]);
    const again = await rawSocket(server.baseUrl);
    await again.init(BEARER(API_KEY));
    await closeAll([held[1] as RawSocket, other, again]);
  });

  it('past MAX_PENDING_WEBSOCKETS sockets awaiting connection_init, an upgrade is answered 503', async () => {
    const waiting = [await rawSocket(server.baseUrl), await rawSocket(server.baseUrl)];
    expect(await upgradeStatus(server.baseUrl)).toBe(503);
    await (waiting[0] as RawSocket).init(BEARER(API_KEY));
    expect(await upgradeStatus(server.baseUrl)).toBe(101);
    await closeAll(waiting);
  });

  it('past MAX_SUBSCRIPTIONS open sockets, an upgrade is answered 503', async () => {
    const sockets: RawSocket[] = [];
    for (const key of [API_KEY, API_KEY, OTHER_API_KEY, OTHER_API_KEY]) {
      const raw = await rawSocket(server.baseUrl);
      await raw.init(BEARER(key));
      sockets.push(raw);
    }
    expect(await upgradeStatus(server.baseUrl)).toBe(503);
    await closeAll(sockets);
    expect(await upgradeStatus(server.baseUrl)).toBe(101);
  });

  it('a peer that sends pings and never reads their pongs is cut once they pile up', async () => {
    const raw = await rawSocket(server.baseUrl);
    raw.socket.pause();
    const payload = { filler: 'p'.repeat(3_900) };
    for (let index = 0; index < 4_000; index++) raw.send({ type: 'ping', payload });
    await new Promise((turned) => setTimeout(turned, 1_000));
    raw.socket.resume();
    expect(await closedWithin(raw, 5_000)).toMatchObject({ code: 1006 });
  });

  it('subscribe, complete and subscribe again with one id while the first starts: after the socket closes, no stream is left', async () => {
    const raw = await rawSocket(server.baseUrl);
    await raw.init(BEARER(API_KEY));
    raw.send({ id: 'a', type: 'subscribe', payload: { query: PET_CREATED } });
    raw.send({ id: 'a', type: 'complete' });
    raw.send({ id: 'a', type: 'subscribe', payload: { query: PET_CREATED } });
    await vi.waitFor(async () => expect(await openStreams(server)).toBeGreaterThan(0), WAIT);
    await new Promise((turned) => setTimeout(turned, 300));
    raw.socket.close();
    await raw.closed;
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
  });
});
