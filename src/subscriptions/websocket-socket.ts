import { CloseCode, makeServer, type ServerOptions } from 'graphql-ws';
import { type WebSocket, WebSocketServer } from 'ws';
import type { ConnectionExtra, WebSocketsOptions } from './websocket.ts';
import { endSocket, onSocketEnd } from './websocket-close.ts';

type ProtocolServer = ReturnType<typeof makeServer<Record<string, unknown> | undefined, ConnectionExtra>>;

/** graphql-ws's protocol server over our hooks; the admission cuts a socket still waiting for connection_init. */
export const protocolServer = (hooks: ServerOptions<Record<string, unknown> | undefined, ConnectionExtra>) =>
  makeServer<Record<string, unknown> | undefined, ConnectionExtra>({ ...hooks, connectionInitWaitTimeout: 0 });

/** ws's server for sockets the HTTP server hands over: graphql-transport-ws only, messages up to `maxPayload`. */
export const webSocketServer = (maxPayload: number) =>
  new WebSocketServer({
    noServer: true,
    maxPayload,
    handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false),
  });

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

/**
 * Replies waiting for a peer that does not read (graphql-ws answers each `ping` with its payload,
 * even before `connection_init`) are bounded: past twice the largest message, the socket is cut.
 */
const unread = (socket: WebSocket, maxPayloadBytes: number) => socket.bufferedAmount > 2 * maxPayloadBytes;

/** A socket handed to graphql-ws's protocol server: its messages, sends and closes, kept alive by pings. */
export function serveSocket(
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
      close: (code, reason) => endSocket(socket, code ?? 1000, reason ?? ''),
      onMessage: (handle) =>
        socket.on('message', (data) => {
          // Closed by the server: what the peer sends before it answers starts nothing.
          if (socket.readyState !== socket.OPEN) return;
          if (unread(socket, maxPayloadBytes)) return void socket.terminate();
          handle(String(data)).catch((error: unknown) => {
            logger.error({ err: error }, 'unexpected error on a GraphQL WebSocket');
            endSocket(socket, CloseCode.InternalServerError, 'Internal server error');
          });
        }),
    },
    extra,
  );
  keepAlive(socket, pingMs);
  // A message over maxPayload, a bad frame: ws closes the socket itself (1009, 1002); nothing to answer.
  socket.on('error', (error) => logger.info({ err: error }, 'GraphQL WebSocket closed on a protocol error'));
  // As the server closes it or as it closes, whichever comes first: its streams end at once.
  onSocketEnd(socket, (code, reason) => {
    void closed(code, reason);
    onClosed();
  });
}

/** Closes each socket with 1001 (cut after a grace if its peer does not answer); settles when all are closed. */
export async function goAway(sockets: WebSocket[]): Promise<void> {
  for (const socket of sockets) endSocket(socket, 1001, 'Going away');
  await Promise.all(
    sockets.map((socket) =>
      socket.readyState === socket.CLOSED ? undefined : new Promise((gone) => socket.once('close', gone)),
    ),
  );
}
