import { createServer, type RequestListener, type Server } from 'node:http';

/** Slow senders must not hold sockets: all headers within 15 s, the whole request within 30 s. */
export const HEADERS_TIMEOUT_MS = 15_000;
export const REQUEST_TIMEOUT_MS = 30_000;

/** The node:http server every listener of ours runs in: main's, the tests' and the benchmark's. */
export function createHttpServer(listener: RequestListener): Server {
  return createServer({ headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS }, listener);
}
