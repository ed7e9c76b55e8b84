import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { allowedOrigin, type CorsPolicy } from '../edge/cors.ts';
import { GRAPHQL_ENDPOINT } from '../graphql-http/yoga.ts';
import type { KeyGone } from '../http/stream-outcomes.ts';
import type { Metrics } from '../metrics/metrics.ts';
import {
  type AdmittedUpgrade,
  instanceRefusal,
  isUpgradeRefusal,
  type UpgradeAdmission,
  type UpgradeRefusal,
} from './websocket-admission.ts';
import { CLOSE_GRACE_MS } from './websocket-close.ts';
import { WebSocketOperation } from './websocket-operation.ts';
import type { Transport, TransportOptions } from './websocket-server.ts';

export interface WebSocketsOptions extends TransportOptions {
  metrics: Metrics;
  cors: CorsPolicy | undefined;
  /** Who may open a socket before it is authenticated: per address shares, taken at the upgrade. */
  admission: UpgradeAdmission;
}

/** A refused upgrade's answer: its status, its fields (Retry-After), and its reason as a GraphQL error when there is one. */
type UpgradeAnswer = { status: number } & Partial<Pick<UpgradeRefusal, 'headers' | 'message' | 'reason'>>;

const ERROR_CODES: Record<number, string> = { 429: 'RATE_LIMITED', 503: 'SERVICE_UNAVAILABLE' };

/**
 * Only /graphql, and from a browser only a page of our own origin (GraphiQL) or one CORS_ORIGINS
 * lists, as for /graphql; clients that are not browsers send no Origin. Browsers do not apply CORS to
 * WebSockets, so without this any site a key's holder visits could use a key it holds.
 */
function upgradeRefusal(req: IncomingMessage, cors: CorsPolicy | undefined): number | undefined {
  if ((req.url ?? '').split('?', 1)[0] !== GRAPHQL_ENDPOINT) return 404;
  const origin = req.headers.origin;
  if (origin === undefined || allowedOrigin(cors, req) !== undefined) return undefined;
  return URL.canParse(origin) && new URL(origin).host === req.headers.host ? undefined : 403;
}

function responseOf({ status, headers = {}, message }: UpgradeAnswer): string {
  const body =
    message === undefined ? '' : JSON.stringify({ errors: [{ message, extensions: { code: ERROR_CODES[status] } }] });
  const fields = Object.entries({
    ...(body ? { 'Content-Type': 'application/json; charset=utf-8' } : {}),
    ...headers,
    Connection: 'close',
    'Content-Length': String(Buffer.byteLength(body)),
  }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${fields.join('')}\r\n${body}`;
}

/**
 * GraphQL over WebSocket (graphql-transport-ws) on /graphql, beside SSE: sockets the HTTP server
 * hands over on `upgrade`, once the admission let them in, served by graphql-ws (websocket-server.ts).
 */
export function createWebSockets(options: WebSocketsOptions) {
  const { cors, accessLog, admission, metrics } = options;
  let closing = false;
  let closed: Promise<void> | undefined;

  /** Answers a refused upgrade, counted by reason if it has one, and writes its access-log line as any request's. */
  function refuse(req: IncomingMessage, socket: Duplex, answer: UpgradeAnswer, admitted?: AdmittedUpgrade): void {
    admitted?.release();
    if (answer.reason) metrics.countUpgradeRefused(answer.reason);
    socket.end(responseOf(answer));
    const attempt = new WebSocketOperation(req);
    attempt.clientAddress = admission.addressOf(req);
    attempt.res.statusCode = answer.status;
    accessLog(attempt, performance.now());
  }

  // ws and graphql-ws are loaded on the first upgrade: an instance that never sees one does not hold them.
  let transport: Promise<Transport> | undefined;
  const loadTransport = () =>
    (transport ??= import('./websocket-server.ts').then((loaded) => loaded.createTransport(options)));

  function handOver(req: IncomingMessage, socket: Duplex, head: Buffer, admitted: AdmittedUpgrade, loaded: Transport) {
    const refused = instanceRefusal(closing, loaded.full());
    if (refused) return refuse(req, socket, refused, admitted);
    loaded.wss.handleUpgrade(req, socket, head, (ws) => {
      admitted.opened(ws);
      loaded.serve(ws, req, admitted.release);
    });
  }

  return {
    /** node:http's `upgrade`: /graphql from an allowed origin, if admitted, becomes a WebSocket; anything else is refused. */
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
      socket.on('error', () => socket.destroy());
      const status = upgradeRefusal(req, cors);
      if (status) refuse(req, socket, { status });
      else
        void admission.admit(req, socket).then((answer) => {
          if (isUpgradeRefusal(answer)) refuse(req, socket, answer);
          else void loadTransport().then((loaded) => handOver(req, socket, head, answer, loaded));
        });
    },
    /** The key was revoked: its connections close with 4401 (their streams end with them). */
    endKey: (keyId: string, why: KeyGone) => void transport?.then((loaded) => loaded.endKey(keyId, why)),
    /**
     * The instance is stopping: new sockets are refused, every socket closes with 1001 (graphql-ws
     * clients reconnect, elsewhere) once its subscriptions have sent `complete` (the streams' slots
     * were ended just before), and is cut after a grace. Resolves when none is left.
     */
    close: (): Promise<void> =>
      (closed ??= (async () => {
        closing = true;
        const loaded = await transport;
        // Their streams' `complete` first, then the close frame behind it.
        await loaded?.ended(CLOSE_GRACE_MS);
        await new Promise((turned) => setImmediate(turned));
        await loaded?.goAway();
      })()),
  };
}

export type WebSockets = ReturnType<typeof createWebSockets>;
