import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import { DEFAULTS } from '../config.ts';
import { EdgeResponse } from './edge-response.ts';

/** net.Server's close: stops listening and waits for the connections, closing none of them. */
const netClose = NetServer.prototype.close;

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
  /** How long an idle keep-alive connection stays open: longer than any balancer in front keeps its own. */
  keepAliveTimeoutMs: number;
}

const DEFAULT_TIMEOUTS: HttpServerTimeouts = {
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  checkIntervalMs: TIMEOUT_CHECK_INTERVAL_MS,
  keepAliveTimeoutMs: DEFAULTS.KEEP_ALIVE_TIMEOUT_MS,
};

/**
 * The node:http server every listener of ours runs in: main's, the tests' and the benchmark's.
 * The tests shorten the timeouts: they cannot wait 15 s for each slow sender.
 */
export function createHttpServer(listener: RequestListener, timeouts: Partial<HttpServerTimeouts> = {}): Server {
  const chosen = { ...DEFAULT_TIMEOUTS, ...timeouts };
  const server = createServer(
    {
      headersTimeout: chosen.headersTimeoutMs,
      requestTimeout: chosen.requestTimeoutMs,
      connectionsCheckingInterval: chosen.checkIntervalMs,
      // Headers decided before the answer go out with it, in one writeHead.
      ServerResponse: EdgeResponse,
    },
    listener,
  );
  // Idle time between requests on a connection; a slow request is still cut by the two deadlines above.
  server.keepAliveTimeout = chosen.keepAliveTimeoutMs;
  return server;
}

export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** Sockets handed over on `upgrade` (WebSockets): closeAllConnections does not reach them, the drain must. */
const upgradedSockets = new WeakMap<Server, Set<Duplex>>();

const isWebSocketUpgrade = (req: IncomingMessage) =>
  (req.headers.upgrade ?? '').split(',').some((protocol) => protocol.trim().toLowerCase() === 'websocket');

/** What asks for the other protocol: dropped when the request is parsed again as plain HTTP/1.1. */
const UPGRADE_HEADERS = new Set(['upgrade', 'connection', 'http2-settings']);

/**
 * A request asking for another protocol (`Upgrade: h2c` from `curl --http2 http://`, Java's
 * HttpClient) is answered over HTTP/1.1 as if it had not asked (RFC 9110 §7.8 lets a server ignore
 * Upgrade): its head is written back, without the upgrade headers, in front of what followed it on
 * the socket, and the socket is handed to the server as a new connection (node:http's documented
 * 'connection' injection), which parses it as any request: its body, keep-alive, deadlines, the
 * edge's request id and access-log line.
 */
function serveWithoutUpgrade(http: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] as string;
    if (!UPGRADE_HEADERS.has(name.toLowerCase())) lines.push(`${name}: ${raw[index + 1]}`);
  }
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
  http.emit('connection', socket);
}

/**
 * Hands WebSocket upgrade requests to `upgrade` (without a listener Node gives them to the request
 * listener); any other `Upgrade` is served as a plain request.
 */
export function acceptUpgrades(http: Server, upgrade: UpgradeListener): void {
  const sockets = new Set<Duplex>();
  upgradedSockets.set(http, sockets);
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Only WebSockets leave the server: a socket served without upgrade is its connection again,
    // and one listener per such request would pile up on a keep-alive socket.
    if (!isWebSocketUpgrade(req)) return serveWithoutUpgrade(http, req, socket, head);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    upgrade(req, socket, head);
  });
}

/**
 * A socket idle when draining starts may already carry its client's next request: it gets this long
 * to arrive (and be answered, with `Connection: close`) before idle sockets are closed.
 */
const IDLE_GRACE_MS = 500;
const IDLE_SWEEP_MS = 100;

/**
 * Stops accepting connections at once, lets in-flight requests finish, closes sockets as they fall
 * idle, and after `timeoutMs` closes whatever is left, upgraded sockets included (net close waits
 * for them too). Resolves with whether the deadline was hit.
 * Not `server.close()` alone: on Node 20 it also closes idle sockets at once, resetting a request
 * that was already on its way over one of them.
 */
export async function drainHttpServer(http: Server, timeoutMs: number): Promise<{ timedOut: boolean }> {
  let timedOut = false;
  const closed = new Promise<void>((done) => netClose.call(http, () => done()));
  let sweep: NodeJS.Timeout | undefined;
  const grace = setTimeout(() => {
    http.closeIdleConnections();
    sweep = setInterval(() => http.closeIdleConnections(), IDLE_SWEEP_MS);
  }, IDLE_GRACE_MS);
  const deadline = setTimeout(() => {
    timedOut = true;
    http.closeAllConnections();
    for (const socket of upgradedSockets.get(http) ?? []) socket.destroy();
  }, timeoutMs);
  await closed;
  clearTimeout(grace);
  clearInterval(sweep);
  clearTimeout(deadline);
  return { timedOut };
}
