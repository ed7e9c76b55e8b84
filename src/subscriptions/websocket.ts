import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context } from 'graphql-ws';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer } from 'ws';
import type { AccessLog } from '../edge/access-log.ts';
import type { KeyCheck, KeyedExchange } from '../edge/authenticate.ts';
import type { CorsPolicy } from '../edge/cors.ts';
import type { Metrics } from '../metrics/metrics.ts';
import {
  type AdmittedUpgrade,
  instanceRefusal,
  isUpgradeRefusal,
  type UpgradeAdmission,
  type UpgradeRefusal,
} from './websocket-admission.ts';
import { CLOSE_GRACE_MS } from './websocket-close.ts';
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
  /** Who may open a socket before it is authenticated: per address shares, taken at the upgrade. */
  admission: UpgradeAdmission;
}

/** What graphql-ws hands our hooks for one connection. */
export interface ConnectionExtra {
  socket: WebSocket;
  request: IncomingMessage;
  /** Set once `connection_init` brought a key that authenticated. */
  key?: ConnectionKey;
  /** Its operations under way: each is finished when the socket closes, whatever graphql-ws still knows of it. */
  operations: Set<WebSocketOperation>;
  /** Its `connection_init` came: the socket leaves its address's share of waiting sockets. */
  initialised: () => void;
}

/** The lazily loaded transport: ws's server and graphql-ws's protocol server over our hooks. */
interface Transport {
  sockets: typeof import('./websocket-socket.ts');
  server: ReturnType<typeof import('./websocket-socket.ts').protocolServer>;
  wss: WebSocketServer;
}

export type ConnectionContext = Context<Record<string, unknown> | undefined, ConnectionExtra>;

/** An upgrade the admission or the instance refused: its answer, its access-log line, counted by reason. */
function refuse(
  { metrics, accessLog, admission }: Pick<WebSocketsOptions, 'metrics' | 'accessLog' | 'admission'>,
  req: IncomingMessage,
  socket: Duplex,
  refused: UpgradeRefusal,
  admitted?: AdmittedUpgrade,
): void {
  admitted?.release();
  metrics.countUpgradeRefused(refused.reason);
  refuseUpgrade(req, socket, refused, { accessLog, clientAddress: admission.addressOf(req) });
}

/**
 * GraphQL over WebSocket (graphql-transport-ws) on /graphql, beside SSE: graphql-ws's protocol
 * server over ws sockets the HTTP server hands over on `upgrade`, once the admission let them in.
 * The key comes in `connection_init`; each operation then runs through Yoga (websocket-operations.ts).
 */
export function createWebSockets(options: WebSocketsOptions) {
  const { cors, accessLog, admission } = options;
  const connections = createConnectionCounts(options.limits);
  const operations = createWebSocketOperations(options, connections);
  let wss: WebSocketServer | undefined;
  let closing = false;

  // ws and graphql-ws are loaded on the first upgrade: an instance that never sees one does not hold them.
  let transport: Promise<Transport> | undefined;
  const loadTransport = () =>
    (transport ??= import('./websocket-socket.ts').then((sockets) => {
      wss = sockets.webSocketServer(options.maxPayloadBytes);
      return { sockets, server: sockets.protocolServer(operations.hooks), wss };
    }));

  function handOver(req: IncomingMessage, socket: Duplex, head: Buffer, admitted: AdmittedUpgrade, loaded: Transport) {
    const refused = instanceRefusal(closing, connections.full());
    if (refused) refuse(options, req, socket, refused, admitted);
    else
      loaded.wss.handleUpgrade(req, socket, head, (ws) => {
        admitted.opened(ws);
        connections.opened(ws);
        const extra: ConnectionExtra = {
          socket: ws,
          request: req,
          operations: new Set(),
          initialised: admitted.release,
        };
        // graphql-ws forgets an operation whose id was reused while it started: ours end with the socket.
        loaded.sockets.serveSocket(loaded.server, extra, options, () => operations.connectionClosed(extra));
      });
  }

  return {
    /** node:http's `upgrade`: /graphql from an allowed origin, if admitted, becomes a WebSocket; anything else is refused. */
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
      socket.on('error', () => socket.destroy());
      const status = upgradeRefusal(req, cors);
      if (status) refuseUpgrade(req, socket, { status }, { accessLog, clientAddress: admission.addressOf(req) });
      else
        void admission.admit(req, socket).then((answer) => {
          if (isUpgradeRefusal(answer)) refuse(options, req, socket, answer);
          else void loadTransport().then((loaded) => handOver(req, socket, head, answer, loaded));
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
      const loaded = await transport;
      const sockets = loaded ? [...loaded.wss.clients] : [];
      // Their streams' `complete` first (the slots were just ended), then the close frame behind it.
      await operations.ended(CLOSE_GRACE_MS);
      await new Promise((turned) => setImmediate(turned));
      await loaded?.sockets.goAway(sockets);
    },
    get size(): number {
      return wss?.clients.size ?? 0;
    },
  };
}

export type WebSockets = ReturnType<typeof createWebSockets>;
