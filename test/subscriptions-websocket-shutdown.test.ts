import { describe, expect, it, vi } from 'vitest';
import { drainHttpServer } from '../src/http/server.ts';
import { createPetAt } from './support/create-pet-at.ts';
import { sampleIn } from './support/metric-sample.ts';
import { expectAtDelayEnd, expectCleanExit, sigterm, startRestartingService } from './support/rolling-restart.ts';
import { AUTH, startTestServer } from './support/test-server.ts';
import { rawSocket, upgradeStatus } from './support/websocket.ts';

const PET_CREATED = 'subscription { petCreated { cursor pet { id name } } }';

describe('WebSocket subscriptions at SIGTERM (a rolling restart)', () => {
  it('deliver through SHUTDOWN_DELAY_MS, get `complete` and close 1001 within 1 s of its end, and the process exits 0 well before SHUTDOWN_TIMEOUT_MS', {
    timeout: 60_000,
  }, async () => {
    const service = await startRestartingService('ws_stop');
    try {
      const { origin } = service;
      const raw = await rawSocket(origin);
      await raw.init(AUTH);
      raw.send({ id: 'a', type: 'subscribe', payload: { query: PET_CREATED } });
      // The subscription is open once its slot is taken: a pet created from then on reaches it.
      await vi.waitFor(
        async () => {
          const scrape = await (await fetch(`${origin}/metrics`, { headers: AUTH })).text();
          expect(sampleIn(scrape, 'graphql_subscriptions_open')).toBe(1);
        },
        { timeout: 5_000, interval: 50 },
      );
      const signalled = sigterm(service);
      const id = await createPetAt(origin, AUTH, 'During the delay');
      const { code } = await raw.closed;
      expectAtDelayEnd(signalled);
      expect(code).toBe(1001);
      expect(raw.messages.map((message) => message.type)).toEqual(['connection_ack', 'next', 'complete']);
      expect(raw.messages[1]).toMatchObject({ payload: { data: { petCreated: { pet: { id: String(id) } } } } });
      await expectCleanExit(service, signalled);
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
      await raw.init(AUTH);
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
      await raw.init(AUTH);
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
