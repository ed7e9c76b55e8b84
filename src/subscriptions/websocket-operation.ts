import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Scopes } from '../auth/scopes.ts';
import type { ExecutionExchange } from '../context.ts';
import { GRAPHQL_ENDPOINT } from '../graphql-http/yoga.ts';
import type { StreamRecord } from '../http/exchange.ts';

/**
 * One operation over a WebSocket (or one connection_init), as the edge's Exchange is one HTTP request:
 * what the key check, the rules, the stream slot and the access log read (the status HTTP would answer).
 * It has no headers to set or read: no RateLimit fields, no Idempotency-Key.
 */
export class WebSocketOperation implements ExecutionExchange {
  readonly id = randomUUID();
  readonly startedAt = performance.now();
  readonly face = 'graphql' as const;
  readonly path = GRAPHQL_ENDPOINT;
  readonly res = { statusCode: 0, writableFinished: true };
  keyId = '';
  scopes: Scopes = new Set();
  arbitraryDocuments = false;
  clientAddress = '';
  documentId = '';
  stream: StreamRecord | undefined = undefined;
  readonly #closed = new AbortController();

  /** `req`, the upgrade request: the access log's method and path, the client address. */
  constructor(readonly req: IncomingMessage) {}

  setResponseHeader(): void {}
  headerValues = (): undefined => undefined;
  clientGone = (): boolean => this.#closed.signal.aborted;
  whenClosed(listener: () => void): void {
    if (this.clientGone()) listener();
    else this.#closed.signal.addEventListener('abort', listener, { once: true });
  }
  /** Cuts the WebSocket the operation travels on (every operation on it ends): its client stopped reading. */
  cut = (): void => void this.req.socket.destroy();
  /** The operation is over (its end, the client's `complete`, the socket's end): releases what it held. */
  close = (): void => this.#closed.abort();
}
