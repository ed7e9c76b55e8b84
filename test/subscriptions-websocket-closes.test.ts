// A WebSocket the server closes releases what it held at once, whether or not its peer answers the
// close frame (issue 36, I2).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { sampleIn } from './support/metric-sample.ts';
import { API_KEY, type TestServer, useTestServer } from './support/test-server.ts';
import { rawSocket } from './support/websocket.ts';

const PET_CREATED = 'subscription { petCreated { cursor pet { id } } }';
const BEARER = { Authorization: `Bearer ${API_KEY}` };

const openStreams = async (server: TestServer) =>
  sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_open');

/** Polls `read` until it gives `wanted`; its last value after `withinMs`. */
async function until(read: () => Promise<number>, wanted: number, withinMs: number): Promise<number> {
  const deadline = performance.now() + withinMs;
  let value = await read();
  while (value !== wanted && performance.now() < deadline) {
    await sleep(20);
    value = await read();
  }
  return value;
}

describe('WebSockets the server closes', () => {
  const server = useTestServer();

  it('a socket closed 4409 while its peer does not read frees its stream slot at once, not after the close handshake', async () => {
    const raw = await rawSocket(server.baseUrl);
    await raw.init(BEARER);
    raw.send({ id: 'a', type: 'subscribe', payload: { query: PET_CREATED } });
    expect(await until(() => openStreams(server), 1, 5_000)).toBe(1);
    // The peer stops reading: it will not answer the close frame (ws would wait 30 s for it).
    raw.socket.pause();
    raw.send({ id: 'a', type: 'subscribe', payload: { query: PET_CREATED } });
    // Generous against the handshake's 30 s: the slot is released as the close frame is sent.
    expect(await until(() => openStreams(server), 0, 2_000)).toBe(0);
    raw.socket.resume();
    expect((await raw.closed).code).toBe(4409);
  });
});
