import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { CloseCode, type Context, makeServer } from 'graphql-ws';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import type { AccessLog } from '../edge/access-log.ts';
import type { KeyCheck, KeyedExchange } from '../edge/authenticate.ts';
import { allowedOrigin, type CorsPolicy } from '../edge/cors.ts';
import type { RateLimits } from '../edge/rate-limits.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { GRAPHQL_ENDPOINT } from '../yoga.ts';
import type { ConnectionKey } from './websocket-operation.ts';
import { createWebSocketOperations, type GraphQLFetch } from './websocket-operations.ts';

export interface WebSocketsOptions {
  /** Yoga's own request handling: every operation runs through it as an SSE or JSON request would. */
  fetchGraphQL: GraphQLFetch;
  checkKey: (exchange: KeyedExchange, authorization: string | null) => KeyCheck;
  rateLimits: RateLimits;
  metrics: Metrics;
  accessLog: AccessLog;
  logger: Logger;
  cors: CorsPolicy | undefined;
  /** Largest message taken (MAX_GRAPHQL_BODY_BYTES, as for a POST): ws closes with 1009 beyond it. */
  maxPayloadBytes: number;
  /** How often each socket is pinged; one that answered none of two pings is cut. */
  pingMs: number;
}

/** What graphql-ws hands our hooks for one connection. */
export interface ConnectionExtra {
  socket: WebSocket;
  request: IncomingMessage;
  /** Set once `connection_init` brought a key that authenticated. */
  key?: ConnectionKey;
}

export type ConnectionContext = Context<Record<string, unknown> | undefined, ConnectionExtra>;

/** Clients get this long to read the 1001 and close before their sockets are cut. */
const CLOSE_GRACE_MS = 1_000;

/**
 * A browser's page may open the socket from our own origin (GraphiQL) or one CORS_ORIGINS lists,
 * as it may call /graphql; clients that are not browsers send no Origin. Browsers do not apply CORS
 * to WebSockets, so without this any site a key's holder visits could use a key it holds.
 */
function originAllowed(req: IncomingMessage, cors: CorsPolicy | undefined): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || allowedOrigin(cors, req) !== undefined) return true;
  return URL.canParse(origin) && new URL(origin).host === req.headers.host;
}

/** Why the upgrade is refused (its status line), or undefined: only /graphql, from an allowed origin. */
function upgradeRefusal(req: IncomingMessage, cors: CorsPolicy | undefined): string | undefined {
  if ((req.url ?? '').split('?', 1)[0] !== GRAPHQL_ENDPOINT) return '404 Not Found';
  return originAllowed(req, cors) ? undefined : '403 Forbidden';
}

function refuseUpgrade(socket: Duplex, statusLine: string): void {
  socket.end(`HTTP/1.1 ${statusLine}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** ws-level pings: proxies see traffic, and a peer that answers none of two pings (gone, or not reading) is cut. */
function keepAlive(socket: WebSocket, pingMs: number): void {
  let answered = true;
  socket.on('pong', () => {
    answered = true;
  });
  const timer = setInterval(() => {
    if (!answered) return void socket.terminate();
    answered = false;
    socket.ping();
  }, pingMs);
  socket.once('close', () => clearInterval(timer));
}

type ProtocolServer = ReturnType<typeof makeServer<Record<string, unknown> | undefined, ConnectionExtra>>;

/** A socket handed to graphql-ws's protocol server: its messages, sends and closes, kept alive by pings. */
function opened(
  server: ProtocolServer,
  socket: WebSocket,
  request: IncomingMessage,
  { logger, pingMs }: Pick<WebSocketsOptions, 'logger' | 'pingMs'>,
): void {
  const closed = server.opened(
    {
      protocol: socket.protocol,
      send: (data) =>
        new Promise<void>((sent, failed) => {
          if (socket.readyState !== socket.OPEN) return sent();
          socket.send(data, (error) => (error ? failed(error) : sent()));
        }),
      close: (code, reason) => socket.close(code, reason),
      onMessage: (handle) =>
        socket.on('message', (data) => {
          handle(String(data)).catch((error: unknown) => {
            logger.error({ err: error }, 'unexpected error on a GraphQL WebSocket');
            socket.close(CloseCode.InternalServerError, 'Internal server error');
          });
        }),
    },
    { socket, request },
  );
  keepAlive(socket, pingMs);
  // A message over maxPayload, a bad frame: ws closes the socket itself (1009, 1002); nothing to answer.
  socket.on('error', (error) => logger.info({ err: error }, 'GraphQL WebSocket closed on a protocol error'));
  socket.once('close', (code, reason) => void closed(code, String(reason)));
}

/**
 * GraphQL over WebSocket (graphql-transport-ws) on /graphql, beside SSE: graphql-ws's protocol
 * server over ws sockets the HTTP server hands over on `upgrade`. The key comes in
 * `connection_init`; each operation then runs through Yoga (websocket-operations.ts).
 */
export function createWebSockets(options: WebSocketsOptions) {
  const { cors } = options;
  const operations = createWebSocketOperations(options);
  const server = makeServer<Record<string, unknown> | undefined, ConnectionExtra>(operations.hooks);
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes,
    handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false),
  });
  let closing = false;

  return {
    /** node:http's `upgrade`: /graphql from an allowed origin becomes a WebSocket; anything else is refused. */
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
      socket.on('error', () => socket.destroy());
      const refusal = closing ? '503 Service Unavailable' : upgradeRefusal(req, cors);
      if (refusal) refuseUpgrade(socket, refusal);
      else wss.handleUpgrade(req, socket, head, (ws) => opened(server, ws, req, options));
    },
    /**
     * The instance is stopping: new sockets are refused, every socket closes with 1001 (graphql-ws
     * clients reconnect, elsewhere) once its subscriptions have sent `complete` (the streams' slots
     * were ended just before), and is cut after a grace. Resolves when none is left.
     */
    async close(): Promise<void> {
      closing = true;
      const sockets = [...wss.clients];
      // Their streams' `complete` first (the slots were just ended), then the close frame behind it.
      await operations.ended(CLOSE_GRACE_MS);
      await new Promise((turned) => setImmediate(turned));
      for (const socket of sockets) socket.close(1001, 'Going away');
      const cut = setTimeout(() => {
        for (const socket of sockets) socket.terminate();
      }, CLOSE_GRACE_MS);
      await Promise.all(
        sockets.map((socket) =>
          socket.readyState === socket.CLOSED ? undefined : new Promise((gone) => socket.once('close', gone)),
        ),
      );
      clearTimeout(cut);
    },
    get size(): number {
      return wss.clients.size;
    },
  };
}

export type WebSockets = ReturnType<typeof createWebSockets>;
