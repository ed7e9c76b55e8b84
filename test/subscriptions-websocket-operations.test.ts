// Operations over a WebSocket without a socket: what ends an operation when Yoga's answer is not what it should be.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import type { ConnectionExtra, WebSocketsOptions } from '../src/subscriptions/websocket.ts';
import { createConnectionCounts } from '../src/subscriptions/websocket-connections.ts';
import { forwardedResults } from '../src/subscriptions/websocket-operation.ts';
import { createWebSocketOperations } from '../src/subscriptions/websocket-operations.ts';
import { capturingLogger } from './support/capturing-logger.ts';

const sse = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
    },
  });

describe("Yoga's SSE answer read back", () => {
  it('a `next` frame that is not JSON ends the results and releases the operation once', async () => {
    const onEnd = vi.fn();
    const results = forwardedResults(
      sse('event: next\ndata: {"data":{"a":1}}\n\nevent: next\ndata: {not json\n\n'),
      onEnd,
    );
    expect(await results.next()).toEqual({ done: false, value: { data: { a: 1 } } });
    expect(await results.next()).toEqual({ done: true, value: undefined });
    await results.return();
    expect(onEnd).toHaveBeenCalledTimes(1);
  });
});

describe('an operation whose Yoga call throws', () => {
  function setUp(fetchGraphQL: WebSocketsOptions['fetchGraphQL']) {
    const accessLog = vi.fn();
    const { logger, lines } = capturingLogger();
    const options = { fetchGraphQL, checkKey: () => true as const, accessLog, logger } as unknown as WebSocketsOptions;
    const counts = createConnectionCounts({ maxPerKey: 1, maxTotal: 1 });
    const operations = createWebSocketOperations(options, counts);
    const request = { method: 'GET', url: '/graphql', socket: {} } as IncomingMessage;
    const extra = { request, operations: new Set(), key: { keyId: 'k', authorization: 'Bearer k' } } as ConnectionExtra;
    const subscribe = () =>
      operations.hooks.onSubscribe?.({ extra } as never, '1', { query: '{ __typename }' }) as Promise<unknown>;
    return { operations, extra, accessLog, subscribe, lines };
  }

  it('gets an `error` INTERNAL_SERVER_ERROR, its access-log line with 500, and is no longer open', async () => {
    const { operations, extra, accessLog, subscribe, lines } = setUp(() => Promise.reject(new Error('boom')));
    const errors = (await subscribe()) as { toJSON(): { extensions?: { code?: string } } }[];
    expect(errors[0]?.toJSON().extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(extra.operations.size).toBe(0);
    expect(accessLog).toHaveBeenCalledTimes(1);
    expect(accessLog.mock.calls[0]?.[0].res.statusCode).toBe(500);
    // The error's log line names the request as the access line does (reqId), so the two can be joined.
    await vi.waitFor(() => expect(lines.find((line) => line.err)).toBeDefined());
    expect(lines.find((line) => line.err)?.reqId).toBe(accessLog.mock.calls[0]?.[0].id);
    const waited = Promise.race([
      operations.ended(5_000).then(() => 'ended'),
      new Promise((late) => setTimeout(late, 100, 'waiting')),
    ]);
    expect(await waited).toBe('ended');
  });

  it('several may wait for the operations to end: each is told', async () => {
    let fail: ((error: Error) => void) | undefined;
    const { operations, subscribe } = setUp(() => new Promise((_, failed) => (fail = failed)));
    const running = subscribe();
    await vi.waitFor(() => expect(fail).toBeDefined());
    const waits = [operations.ended(5_000), operations.ended(5_000)].map((wait) => wait.then(() => performance.now()));
    const failedAt = performance.now();
    fail?.(new Error('boom'));
    await running;
    for (const endedAt of await Promise.all(waits)) expect(endedAt - failedAt).toBeLessThan(1_000);
  });
});

describe('an operation Yoga answers 401 (its key went while it started: follow-pets.ts asks again)', () => {
  it('gets its `error` UNAUTHENTICATED, then the socket closes 4401 as for a key refused at the subscribe', async () => {
    const refusal = { errors: [{ message: 'The API key is not valid', extensions: { code: 'UNAUTHENTICATED' } }] };
    const fetchGraphQL = async () =>
      new Response(JSON.stringify(refusal), { status: 401, headers: { 'content-type': 'application/json' } });
    const { logger } = capturingLogger();
    const options = {
      fetchGraphQL,
      checkKey: () => true as const,
      accessLog: vi.fn(),
      logger,
    } as unknown as WebSocketsOptions;
    const operations = createWebSocketOperations(options, createConnectionCounts({ maxPerKey: 1, maxTotal: 1 }));
    const socket = { readyState: 1, OPEN: 1, CLOSED: 3, close: vi.fn(), once: vi.fn(), terminate: vi.fn() };
    const request = { method: 'GET', url: '/graphql', socket: {} } as IncomingMessage;
    const extra = {
      request,
      socket,
      operations: new Set(),
      key: { keyId: 'k', authorization: 'Bearer k' },
    } as unknown as ConnectionExtra;
    const subscribed = operations.hooks.onSubscribe?.({ extra } as never, '1', {
      query: 'subscription { petCreated { cursor } }',
    }) as Promise<unknown>;
    const errors = (await subscribed) as { toJSON(): { extensions?: { code?: string } } }[];
    expect(errors[0]?.toJSON().extensions?.code).toBe('UNAUTHENTICATED');
    await vi.waitFor(() => expect(socket.close).toHaveBeenCalledWith(4401, 'The API key is not valid'));
  });
});
