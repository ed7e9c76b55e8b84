// GraphQL over WebSocket for tests: graphql-ws's own client, and raw sockets for hostile cases.
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { GraphQLResult } from './sse.ts';

const DEFAULT_WAIT_MS = 5_000;

/** What one subscribe brought: results, then its end (`complete`, or the `error` message's errors). */
export interface WsOperation {
  /** The next result, or a rejection when none comes within `withinMs` or the operation ends first. */
  next(withinMs?: number): Promise<GraphQLResult>;
  /** Settles when the operation ends: `complete` (undefined) or its errors. */
  ended(withinMs?: number): Promise<GraphQLResult['errors'] | Error | undefined>;
  /** The client leaves this operation (`complete` to the server). */
  close(): void;
}

const wsUrl = (baseUrl: string) => `${baseUrl.replace(/^http/, 'ws')}/graphql`;

/** graphql-ws's client on ws, with the key in connectionParams; no retries, so a refusal is seen as it is. */
export function wsClient(baseUrl: string, connectionParams?: Record<string, unknown>, closes?: number[]): Client {
  return createClient({
    url: wsUrl(baseUrl),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    // One socket for a test's operations, as an app keeps it; dispose() closes it.
    lazyCloseTimeout: 60_000,
    ...(connectionParams ? { connectionParams } : {}),
    on: { closed: (event) => closes?.push((event as { code: number }).code) },
  });
}

function withDeadline<T>(promise: Promise<T>, withinMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, failed) => {
    timer = setTimeout(() => failed(new Error(`no ${what} within ${withinMs} ms`)), withinMs);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** One subscribe on `client`, its results queued until a test reads them. */
export function wsSubscribe(client: Client, payload: { query: string; [name: string]: unknown }): WsOperation {
  const results: GraphQLResult[] = [];
  const waiters: ((result: GraphQLResult | undefined) => void)[] = [];
  let end: { errors: unknown } | undefined;
  let endWaiters: (() => void)[] = [];
  const finish = (errors: unknown) => {
    end = { errors };
    for (const waiter of waiters.splice(0)) waiter(undefined);
    for (const waiter of endWaiters) waiter();
    endWaiters = [];
  };
  const unsubscribe = client.subscribe(payload as { query: string }, {
    next: (result) => {
      const waiter = waiters.shift();
      if (waiter) waiter(result as GraphQLResult);
      else results.push(result as GraphQLResult);
    },
    error: (errors) => finish(errors),
    complete: () => finish(undefined),
  });
  return {
    next(withinMs = DEFAULT_WAIT_MS) {
      const queued = results.shift();
      if (queued) return Promise.resolve(queued);
      if (end) return Promise.reject(new Error(`the operation ended: ${JSON.stringify(end.errors)}`));
      const waited = new Promise<GraphQLResult>((resolve, reject) =>
        waiters.push((result) => (result ? resolve(result) : reject(new Error('the operation ended')))),
      );
      return withDeadline(waited, withinMs, 'result');
    },
    ended(withinMs = DEFAULT_WAIT_MS) {
      if (end) return Promise.resolve(end.errors as never);
      const waited = new Promise<unknown>((resolve) => endWaiters.push(() => resolve(end?.errors)));
      return withDeadline(waited, withinMs, 'end') as never;
    },
    close: unsubscribe,
  };
}

/** A raw graphql-transport-ws socket: what it was sent, and how it closed. */
export interface RawSocket {
  socket: WebSocket;
  messages: Record<string, unknown>[];
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  /** Sends connection_init with `params` and waits for connection_ack. */
  init(params: Record<string, unknown>): Promise<void>;
}

export async function rawSocket(
  baseUrl: string,
  options: WebSocket.ClientOptions & { protocol?: string; headers?: Record<string, string> } = {},
): Promise<RawSocket> {
  // protocol '': none asked for.
  const protocol = options.protocol ?? 'graphql-transport-ws';
  const socket = new WebSocket(wsUrl(baseUrl), protocol === '' ? [] : protocol, options);
  const messages: Record<string, unknown>[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
  const closed = new Promise<{ code: number; reason: string }>((done) =>
    socket.once('close', (code, reason) => done({ code, reason: String(reason) })),
  );
  await withDeadline(
    new Promise<void>((open, failed) => {
      socket.once('open', () => open());
      socket.once('error', failed);
    }),
    DEFAULT_WAIT_MS,
    'open',
  );
  return {
    socket,
    messages,
    closed: withDeadline(closed, 30_000, 'close'),
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    init: (payload) => {
      socket.send(JSON.stringify({ type: 'connection_init', payload }));
      const acked = new Promise<void>((done) => {
        const look = () =>
          messages.some((message) => message.type === 'connection_ack') ? done() : setTimeout(look, 10);
        look();
      });
      return withDeadline(acked, DEFAULT_WAIT_MS, 'connection_ack');
    },
  };
}

/**
 * The status a refused upgrade got (the `unexpected-response` event), or 101 when it opened (the
 * socket is closed at once); sent from `localAddress` when given (127.0.0.2: another client).
 */
export function upgradeStatus(
  baseUrl: string,
  headers: Record<string, string> = {},
  localAddress?: string,
): Promise<number> {
  const socket = new WebSocket(wsUrl(baseUrl), 'graphql-transport-ws', {
    headers,
    ...(localAddress ? { localAddress } : {}),
  });
  const status = new Promise<number>((done) => {
    socket.once('unexpected-response', (_request, response) => {
      done(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('open', () => {
      done(101);
      socket.close();
    });
    socket.once('error', () => done(0));
  });
  return withDeadline(status, DEFAULT_WAIT_MS, 'upgrade answer');
}
