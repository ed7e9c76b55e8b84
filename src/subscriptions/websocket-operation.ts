import type { IncomingMessage } from 'node:http';
import { type ExecutionResult, GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { Scopes } from '../auth/scopes.ts';
import type { ExecutionExchange } from '../context.ts';
import { GRAPHQL_ENDPOINT } from '../graphql-http/yoga.ts';
import type { StreamRecord } from '../http/exchange.ts';

const NO_SCOPES: Scopes = new Set();

/**
 * What the connection's `connection_init` authenticated. Each operation checks `authorization` again
 * (a key revoked, expired or narrowed since applies at once); `keyId` counts the key's connections.
 */
export interface ConnectionKey {
  keyId: string;
  authorization: string;
}

/**
 * One operation over a WebSocket, as the edge's Exchange is one HTTP request: what Yoga's plugins,
 * the rate limits, the stream slot and the access log read. Its "response" is the status Yoga
 * answered the operation with; it has no headers to set (the RateLimit fields have nowhere to go).
 */
export class WebSocketOperation implements ExecutionExchange {
  readonly startedAt = performance.now();
  readonly face = 'graphql' as const;
  readonly path = GRAPHQL_ENDPOINT;
  readonly res = { statusCode: 0, writableFinished: true };
  keyId = '';
  scopes = NO_SCOPES;
  arbitraryDocuments = false;
  clientAddress = '';
  documentId = '';
  stream: StreamRecord | undefined = undefined;
  private readonly closeListeners: (() => void)[] = [];
  private closed = false;

  constructor(
    /** The upgrade request: the access log's method and path, the client address. */
    readonly req: IncomingMessage,
    readonly id: string,
  ) {}

  setResponseHeader(): void {}

  /** No headers travel with an operation over a WebSocket: no Idempotency-Key either. */
  headerValues(): undefined {
    return undefined;
  }

  clientGone(): boolean {
    return this.closed;
  }

  whenClosed(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** Cuts the WebSocket the operation travels on (every operation on it ends): its client stopped reading. */
  cut(): void {
    this.req.socket.destroy();
  }

  /** The operation is over (its end, the client's `complete`, the socket's close): releases what it held. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}

/** A GraphQL error as Yoga formatted it, passed on unchanged (graphql-ws sends `toJSON()`). */
export class ForwardedError extends GraphQLError {
  constructor(private readonly formatted: GraphQLFormattedError) {
    super(typeof formatted.message === 'string' ? formatted.message : 'Unexpected error.');
  }

  override toJSON(): GraphQLFormattedError {
    return this.formatted;
  }
}

/** One SSE frame of Yoga's: a `next` result, `complete`, or nothing (a ping, a comment). */
function frameOf(frame: string): ExecutionResult | 'complete' | undefined {
  let event = '';
  let data = '';
  for (const line of frame.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data += line.slice(5).trimStart();
  }
  if (event === 'complete') return 'complete';
  if (event !== 'next' || !data) return undefined;
  try {
    return JSON.parse(data) as ExecutionResult;
  } catch {
    // Not what Yoga writes: the stream ends (its slot released) rather than hang or throw past `return()`.
    return 'complete';
  }
}

/**
 * Yoga's SSE answer read back as results, one frame at a time: the body is read only when graphql-ws
 * asks for the next result, which it does once the previous one was written to the socket, so a slow
 * client holds back the stream (and the feed) instead of filling memory. `return()` acts at once,
 * even while a read waits for the next pet: `onEnd` releases the stream's slot, which ends the read.
 */
export function forwardedResults(
  body: ReadableStream<Uint8Array>,
  onEnd: () => void,
): AsyncGenerator<ExecutionResult, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let over = false;
  const done = (): IteratorReturnResult<void> => {
    if (!over) {
      over = true;
      onEnd();
      reader.cancel().catch(() => {});
    }
    return { done: true, value: undefined };
  };
  async function next(): Promise<IteratorResult<ExecutionResult, void>> {
    while (!over) {
      const end = buffered.indexOf('\n\n');
      if (end === -1) {
        const read = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (read.done) return done();
        buffered += decoder.decode(read.value, { stream: true });
        continue;
      }
      const frame = frameOf(buffered.slice(0, end));
      buffered = buffered.slice(end + 2);
      if (frame === 'complete') return done();
      if (frame) return { done: false, value: frame };
    }
    return done();
  }
  const results: AsyncGenerator<ExecutionResult, void, undefined> = {
    next,
    return: async () => done(),
    throw: async () => done(),
    [Symbol.asyncIterator]: () => results,
  };
  return results;
}
