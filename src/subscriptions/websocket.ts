import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { CloseCode, type Context, makeServer } from 'graphql-ws';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import type { AccessLog } from '../edge/access-log.ts';
import type { KeyCheck, KeyedExchange } from '../edge/authenticate.ts';
import type { CorsPolicy } from '../edge/cors.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { type ConnectionLimits, createConnectionCounts } from './websocket-connections.ts';
import type { ConnectionKey, WebSocketOperation } from './websocket-operation.ts';
import { createWebSocketOperations, type GraphQLFetch } from './websocket-operations.ts';
import { refuseUpgrade, upgradeRefusal } from './websocket-upgrade.ts';

export interface WebSocketsOptions {
  /** Yoga's own request handling: every operation runs through it as an SSE or JSON request would. */
  fetchGraphQL: GraphQLFetch;
  /** The edge's key check: at `connection_init`, and again for each operation (a revoked key stops at once). */
  checkKey: (exchange: KeyedExchange, authorization: string | null) => KeyCheck;
  metrics: Metrics;
  accessLog: AccessLog;
  logger: Logger;
  cors: CorsPolicy | undefined;
  /** Largest message taken (MAX_GRAPHQL_BODY_BYTES, as for a POST): ws closes with 1009 beyond it. */
  maxPayloadBytes: number;
  /** How often each socket is pinged; one that has not answered a ping by the next is cut. */
  pingMs: number;
  limits: ConnectionLimits;
}

/** What graphql-ws hands our hooks for one connection. */
export interface ConnectionExtra {
  socket: WebSocket;
  request: IncomingMessage;
  /** Set once `connection_init` brought a key that authenticated. */
  key?: ConnectionKey;
  /** Its operations under way: each is finished when the socket closes, whatever graphql-ws still knows of it. */
  operations: Set<WebSocketOperation>;
}

export type ConnectionContext = Context<Record<string, unknown> | undefined, ConnectionExtra>;

/** Clients get this long to read the 1001 and close before their sockets are cut. */
const CLOSE_GRACE_MS = 1_000;

/**
 * ws-level pings: proxies see traffic, and a peer that has not answered a ping by the time of the
 * next one (gone, or not reading) is cut: one that falls silent is cut within two intervals.
 */
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

/**
 * Replies waiting for a peer that does not read (graphql-ws answers each `ping` with its payload,
 * even before `connection_init`) are bounded: past twice the largest message, the socket is cut.
 */
const unread = (socket: WebSocket, maxPayloadBytes: number) => socket.bufferedAmount > 2 * maxPayloadBytes;

/** A socket handed to graphql-ws's protocol server: its messages, sends and closes, kept alive by pings. */
function opened(
  server: ProtocolServer,
  extra: ConnectionExtra,
  { logger, pingMs, maxPayloadBytes }: Pick<WebSocketsOptions, 'logger' | 'pingMs' | 'maxPayloadBytes'>,
  onClosed: () => void,
): void {
  const { socket } = extra;
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
          if (unread(socket, maxPayloadBytes)) return void socket.terminate();
          handle(String(data)).catch((error: unknown) => {
            logger.error({ err: error }, 'unexpected error on a GraphQL WebSocket');
            socket.close(CloseCode.InternalServerError, 'Internal server error');
          });
        }),
    },
    extra,
  );
  keepAlive(socket, pingMs);
  // A message over maxPayload, a bad frame: ws closes the socket itself (1009, 1002); nothing to answer.
  socket.on('error', (error) => logger.info({ err: error }, 'GraphQL WebSocket closed on a protocol error'));
  socket.once('close', (code, reason) => {
    void closed(code, String(reason));
    onClosed();
  });
}

/**
 * GraphQL over WebSocket (graphql-transport-ws) on /graphql, beside SSE: graphql-ws's protocol
 * server over ws sockets the HTTP server hands over on `upgrade`. The key comes in
 * `connection_init`; each operation then runs through Yoga (websocket-operations.ts).
 */
export function createWebSockets(options: WebSocketsOptions) {
  const { cors, accessLog } = options;
  const connections = createConnectionCounts(options.limits);
  const operations = createWebSocketOperations(options, connections);
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
      const refusal = closing || connections.full() ? 503 : upgradeRefusal(req, cors);
      if (refusal) refuseUpgrade(req, socket, refusal, accessLog);
      else
        wss.handleUpgrade(req, socket, head, (ws) => {
          connections.opened(ws);
          const extra: ConnectionExtra = { socket: ws, request: req, operations: new Set() };
          // graphql-ws forgets an operation whose id was reused while it started: ours end with the socket.
          opened(server, extra, options, () => operations.connectionClosed(extra));
        });
    },
    /** The key was revoked: its connections close with 4401 (their streams end with them). */
    endKey: connections.endKey,
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
