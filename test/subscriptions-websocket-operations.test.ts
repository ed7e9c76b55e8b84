// Operations over a WebSocket without a network: what ends an operation when its execution does not go as it should.
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { parse } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import { describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import { type TransportOptions, WebSocketTransport } from '../src/subscriptions/websocket-server.ts';
import { capturingLogger } from './support/capturing-logger.ts';

/** A socket as graphql-ws's server drives it: what it was sent, and its closes. */
function fakeSocket() {
  const close = vi.fn((_code?: number, _reason?: string) => {
    socket.readyState = 2;
  });
  const socket = Object.assign(new EventEmitter(), {
    protocol: 'graphql-transport-ws',
    readyState: 1,
    OPEN: 1,
    CLOSED: 3,
    bufferedAmount: 0,
    sent: [] as { type: string; payload?: { extensions?: { code?: string } }[] }[],
    /** Its connection was destroyed under it: each write fails, as node's does. */
    destroyed: false,
    send(data: string, sent?: (error?: Error) => void) {
      if (socket.destroyed)
        return sent?.(Object.assign(new Error('write after destroy'), { code: 'ERR_STREAM_DESTROYED' }));
      socket.sent.push(JSON.parse(data));
      sent?.();
    },
    close,
    terminate: vi.fn(),
  });
  return { socket, close };
}

/** A transport over `options`, one socket on it acknowledged, and a subscribe sent on it. */
async function setUp(options: Partial<TransportOptions>) {
  const accessLog = vi.fn();
  const { logger, lines } = capturingLogger();
  const limits = { maxPerKey: 1, maxTotal: 1 };
  const base = { checkKey: () => true, accessLog, logger, maxPayloadBytes: 4_096, pingMs: 0, plugins: [], limits };
  const transport = new WebSocketTransport({ ...base, ...options } as never);
  const { socket, close } = fakeSocket();
  const request = { method: 'GET', url: '/graphql', socket: { destroyed: false } } as IncomingMessage;
  transport.serve(socket as unknown as WebSocket, request, () => {});
  socket.emit('message', JSON.stringify({ type: 'connection_init', payload: { Authorization: 'Bearer k' } }));
  await vi.waitFor(() => expect(socket.sent.some((message) => message.type === 'connection_ack')).toBe(true));
  const payload = { query: 'subscription { petCreated { cursor } }' };
  socket.emit('message', JSON.stringify({ id: '1', type: 'subscribe', payload }));
  const errors = async () => {
    await vi.waitFor(() => expect(socket.sent.find((message) => message.type === 'error')).toBeDefined());
    return socket.sent.find((message) => message.type === 'error')?.payload ?? [];
  };
  return { transport, accessLog, lines, errors, close, socket, request };
}

const throwing = () => {
  throw new Error('boom');
};

describe('an operation whose execution throws', () => {
  it('gets an `error` INTERNAL_SERVER_ERROR, its access-log line with 500, and is no longer open', async () => {
    const { transport, accessLog, lines, errors } = await setUp({ getEnveloped: throwing as never });
    expect((await errors())[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(accessLog).toHaveBeenCalledTimes(1);
    expect(accessLog.mock.calls[0]?.[0].res.statusCode).toBe(500);
    // The error's log line names the request as the access line does (reqId), so the two can be joined.
    await vi.waitFor(() => expect(lines.find((line) => line.err)).toBeDefined());
    expect(lines.find((line) => line.err)?.reqId).toBe(accessLog.mock.calls[0]?.[0].id);
    const waited = Promise.race([
      transport.ended(5_000).then(() => 'ended'),
      new Promise((late) => setTimeout(late, 100, 'waiting')),
    ]);
    expect(await waited).toBe('ended');
  });

  it('several may wait for the operations to end: each is told', async () => {
    let fail: ((error: Error) => void) | undefined;
    let checks = 0;
    // connection_init's check passes; the operation's waits until it fails.
    const checkKey = () => (checks++ === 0 ? true : new Promise<never>((_, failed) => (fail = failed)));
    const { transport } = await setUp({ checkKey });
    await vi.waitFor(() => expect(fail).toBeDefined());
    const waits = [transport.ended(5_000), transport.ended(5_000)].map((wait) => wait.then(() => performance.now()));
    const failedAt = performance.now();
    fail?.(new Error('boom'));
    for (const endedAt of await Promise.all(waits)) expect(endedAt - failedAt).toBeLessThan(1_000);
  });
});

describe('an operation answered 401 (its key went while it started: follow-pets.ts asks again)', () => {
  it('gets its `error` UNAUTHENTICATED, then the socket closes 4401 as for a key refused at the subscribe', async () => {
    const refusal = createGraphQLError('The API key is not valid', {
      extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
    });
    const enveloped = {
      parse,
      validate: () => [],
      contextFactory: () => ({}),
      subscribe: async () => ({ errors: [refusal] }),
    };
    const { errors, close } = await setUp({ getEnveloped: (() => enveloped) as never });
    expect((await errors())[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    await vi.waitFor(() => expect(close).toHaveBeenCalledWith(4401, 'The API key is not valid'));
  });
});

describe('a stream whose connection was destroyed under it (its client stopped reading and was cut)', () => {
  it('graphql-ws prints nothing of its failed writes', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    async function* events() {
      for (let cursor = 1; ; cursor++) {
        yield { data: { petCreated: { cursor: String(cursor) } } };
        await new Promise((later) => setTimeout(later, 5));
      }
    }
    const enveloped = { parse, validate: () => [], contextFactory: () => ({}), subscribe: async () => events() };
    const { socket, request } = await setUp({ getEnveloped: (() => enveloped) as never });
    await vi.waitFor(() => expect(socket.sent.some((message) => message.type === 'next')).toBe(true));
    Object.assign(request.socket, { destroyed: true });
    socket.destroyed = true;
    await new Promise((later) => setTimeout(later, 50));
    const lines = [...printed.mock.calls];
    printed.mockRestore();
    expect(lines).toEqual([]);
  });
});
