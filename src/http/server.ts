import { createServer, type RequestListener, type Server } from 'node:http';

/** Slow senders must not hold sockets: all headers within 15 s, the whole request within 30 s. */
export const HEADERS_TIMEOUT_MS = 15_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/**
 * How often Node looks for requests past those deadlines. Its default, 30 s, would let a slow
 * sender hold a socket for up to 45 s (headers) or 60 s (body) instead of 15 s and 30 s.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

export interface HttpServerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  checkIntervalMs: number;
}

const DEFAULT_TIMEOUTS: HttpServerTimeouts = {
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  checkIntervalMs: TIMEOUT_CHECK_INTERVAL_MS,
};

/**
 * The node:http server every listener of ours runs in: main's, the tests' and the benchmark's.
 * `timeouts` exists for the tests, which cannot wait 15 s for each slow sender.
 */
export function createHttpServer(listener: RequestListener, timeouts: HttpServerTimeouts = DEFAULT_TIMEOUTS): Server {
  return createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      connectionsCheckingInterval: timeouts.checkIntervalMs,
    },
    listener,
  );
}
