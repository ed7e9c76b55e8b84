import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { createMemoryPetRepository } from '../bench/memory-repository.ts';
import { drainHttpServer } from '../src/http/server.ts';
import { encodeCursor } from '../src/pets/cursor.ts';
import { PET_NAME_MAX_LENGTH } from '../src/pets/pet.ts';
import { sampleIn } from './support/metric-sample.ts';
import { API_KEY, startTestServer, type TestServer } from './support/test-server.ts';

// Enough backlog (after the first pet) to fill the server's and the kernel's buffers many times over.
const PETS = 60_000;
const DRAIN_DEADLINE_MS = 4_000;
const FROM_THE_START = {
  query: 'subscription ($after: String) { petCreated(after: $after) { cursor pet { id name } } }',
  variables: { after: encodeCursor(1) },
};

/** The run's real stores, but a pet repository in memory: a backlog this large is quick to create. */
async function serverWithBacklog(): Promise<TestServer> {
  const pets = createMemoryPetRepository();
  for (let id = 1; id <= PETS; id++) {
    const name = `${id} `.padEnd(PET_NAME_MAX_LENGTH, 'x');
    await pets.create({ name, status: 'available', categoryId: 1 }, { id });
  }
  return startTestServer({ wrapStores: (stores) => ({ ...stores, pets }) });
}

/** An SSE subscriber on a raw socket that reads the response's first bytes, then never reads again. */
async function stalledSseReader(baseUrl: string): Promise<net.Socket> {
  const { port } = new URL(baseUrl);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise((connected) => socket.once('connect', connected));
  const body = JSON.stringify(FROM_THE_START);
  socket.write(
    `POST /graphql HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${API_KEY}\r\nAccept: text/event-stream\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const first = await new Promise<string>((read) => socket.once('data', (chunk) => read(String(chunk))));
  socket.pause();
  expect(first).toMatch(/^HTTP\/1\.1 200/);
  return socket;
}

/** A graphql-ws subscriber that stops reading once its first result arrived. */
async function stalledWebSocketReader(baseUrl: string): Promise<WebSocket> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  const messages: string[] = [];
  socket.on('message', (data) => {
    const message = String(data);
    messages.push(message);
    // At once, not at the next poll: a fast server sends the whole backlog within one poll's interval.
    if (message.includes('"next"')) socket.pause();
  });
  await new Promise((opened) => socket.once('open', opened));
  socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${API_KEY}` } }));
  await vi.waitFor(() => expect(messages).toContain('{"type":"connection_ack"}'), { timeout: 5_000 });
  socket.send(JSON.stringify({ id: 'a', type: 'subscribe', payload: FROM_THE_START }));
  await vi.waitFor(() => expect(messages.some((message) => message.includes('"next"'))).toBe(true), {
    timeout: 5_000,
  });
  return socket;
}

/** Waits until the server delivers no more events (its writes wait for the client), well short of the backlog. */
async function stalled(server: TestServer): Promise<void> {
  const delivered = async () => sampleIn(await server.metrics.scrape.text(), 'graphql_subscription_events_total');
  let last = -1;
  await vi.waitFor(
    async () => {
      const now = await delivered();
      const steady = now === last;
      last = now;
      expect(steady && now > 0).toBe(true);
    },
    { timeout: 15_000, interval: 300 },
  );
  expect(last).toBeLessThan(PETS - 1);
}

describe('a subscriber that stops reading, at shutdown', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('over SSE: its connection is cut about 1 s after endStreams, so the drain ends long before its deadline', {
    timeout: 60_000,
  }, async () => {
    server = await serverWithBacklog();
    const reader = await stalledSseReader(server.baseUrl);
    await stalled(server);
    const startedAt = performance.now();
    void server.service.endStreams();
    const { timedOut } = await drainHttpServer(server.http, DRAIN_DEADLINE_MS);
    const tookMs = performance.now() - startedAt;
    expect(timedOut).toBe(false);
    expect(tookMs).toBeGreaterThanOrEqual(900);
    expect(tookMs).toBeLessThan(2_000);
    const scrape = await server.metrics.scrape.text();
    expect(sampleIn(scrape, 'graphql_subscriptions_open')).toBe(0);
    expect(sampleIn(scrape, 'graphql_subscriptions_ended_total', { reason: 'shutdown' })).toBe(1);
    reader.destroy();
  });

  it('over WebSocket: the same rule, its socket is cut about 1 s after endStreams', { timeout: 60_000 }, async () => {
    server = await serverWithBacklog();
    const reader = await stalledWebSocketReader(server.baseUrl);
    await stalled(server);
    const startedAt = performance.now();
    const ended = server.service.endStreams();
    const { timedOut } = await drainHttpServer(server.http, DRAIN_DEADLINE_MS);
    await ended;
    const tookMs = performance.now() - startedAt;
    expect(timedOut).toBe(false);
    // Not the close handshake's own grace after the streams' (about 2 s): the one cut at 1 s.
    expect(tookMs).toBeGreaterThanOrEqual(900);
    expect(tookMs).toBeLessThan(1_700);
    expect(sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_open')).toBe(0);
    reader.terminate();
  });
});
