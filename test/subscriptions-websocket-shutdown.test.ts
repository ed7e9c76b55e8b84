import { describe, expect, inject, it, vi } from 'vitest';
import { drainHttpServer } from '../src/http/server.ts';
import { sampleIn } from './support/metric-sample.ts';
import { startServiceProcess } from './support/service-process.ts';
import { API_KEY, startTestServer, uniqueDbName } from './support/test-server.ts';
import { rawSocket, upgradeStatus } from './support/websocket.ts';

const PET_CREATED = 'subscription { petCreated { cursor pet { id name } } }';
// Long enough for a create over REST and its events to finish on a loaded machine before the delay ends.
const DELAY_MS = 3_000;
const TIMEOUT_MS = 10_000;
const INIT = { Authorization: `Bearer ${API_KEY}` };

describe('WebSocket subscriptions at SIGTERM (a rolling restart)', () => {
  it('deliver through SHUTDOWN_DELAY_MS, get `complete` and close 1001 within 1 s of its end, and the process exits 0 well before SHUTDOWN_TIMEOUT_MS', {
    timeout: 60_000,
  }, async () => {
    const service = await startServiceProcess({
      via: 'node',
      env: {
        API_KEYS: API_KEY,
        MONGODB_URI: inject('mongoUri'),
        MONGODB_DB: uniqueDbName('ws_stop'),
        SHUTDOWN_DELAY_MS: String(DELAY_MS),
        SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS),
      },
    });
    try {
      const { origin } = service;
      const raw = await rawSocket(origin);
      await raw.init(INIT);
      raw.send({ id: 'a', type: 'subscribe', payload: { query: PET_CREATED } });
      // The subscription is open once its slot is taken: a pet created from then on reaches it.
      await vi.waitFor(
        async () => {
          const scrape = await (await fetch(`${origin}/metrics`, { headers: INIT })).text();
          expect(sampleIn(scrape, 'graphql_subscriptions_open')).toBe(1);
        },
        { timeout: 5_000, interval: 50 },
      );
      const exited = new Promise<number | null>((done) => service.child.once('exit', (code) => done(code)));
      const signalAt = performance.now();
      service.child.kill('SIGTERM');
      const created = await fetch(`${origin}/v1/pets`, {
        method: 'POST',
        headers: { ...INIT, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'During the delay', categoryId: 1 }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: number };
      const { code } = await raw.closed;
      const closedAfter = performance.now() - signalAt;
      expect(code).toBe(1001);
      expect(closedAfter).toBeGreaterThanOrEqual(DELAY_MS);
      expect(closedAfter).toBeLessThan(DELAY_MS + 1_000);
      expect(raw.messages.map((message) => message.type)).toEqual(['connection_ack', 'next', 'complete']);
      expect(raw.messages[1]).toMatchObject({ payload: { data: { petCreated: { pet: { id: String(id) } } } } });
      expect(await exited).toBe(0);
      expect(performance.now() - signalAt).toBeLessThan(DELAY_MS + TIMEOUT_MS / 2);
      expect(service.log.join('\n')).not.toMatch(/drain deadline passed/);
    } finally {
      service.kill();
    }
  });
});

describe('the drain and upgraded sockets', () => {
  it('endStreams: each subscription gets `complete`, each socket 1001, and new upgrades 503', async () => {
    const server = await startTestServer();
    try {
      const raw = await rawSocket(server.baseUrl);
      await raw.init(INIT);
      raw.send({ id: 'a', type: 'subscribe', payload: { query: PET_CREATED } });
      await vi.waitFor(
        async () => expect(sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_open')).toBe(1),
        { timeout: 5_000, interval: 50 },
      );
      const startedAt = performance.now();
      await server.service.endStreams();
      expect((await raw.closed).code).toBe(1001);
      expect(performance.now() - startedAt).toBeLessThan(1_000);
      expect(raw.messages.map((message) => message.type)).toEqual(['connection_ack', 'complete']);
      expect(await upgradeStatus(server.baseUrl)).toBe(503);
    } finally {
      await server.close();
    }
  });

  it('a socket the service never closed is cut at the drain deadline, so the drain ends', async () => {
    const server = await startTestServer();
    try {
      const raw = await rawSocket(server.baseUrl);
      await raw.init(INIT);
      // Without endStreams the socket stays open: the drain's deadline must still reach it.
      const startedAt = performance.now();
      const { timedOut } = await drainHttpServer(server.http, 500);
      expect(timedOut).toBe(true);
      expect(performance.now() - startedAt).toBeLessThan(1_500);
      expect((await raw.closed).code).toBe(1006);
    } finally {
      await server.close();
    }
  });
});
