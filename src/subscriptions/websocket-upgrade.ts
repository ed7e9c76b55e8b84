import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AccessLog } from '../edge/access-log.ts';
import { allowedOrigin, type CorsPolicy } from '../edge/cors.ts';
import { GRAPHQL_ENDPOINT } from '../graphql-http/yoga.ts';
import { WebSocketOperation } from './websocket-operation.ts';

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

const STATUS_LINES: Record<number, string> = {
  403: '403 Forbidden',
  404: '404 Not Found',
  429: '429 Too Many Requests',
  503: '503 Service Unavailable',
};

const ERROR_CODES: Record<number, string> = { 429: 'RATE_LIMITED', 503: 'SERVICE_UNAVAILABLE' };

/** Why the upgrade is refused (its status), or undefined: only /graphql, from an allowed origin. */
export function upgradeRefusal(req: IncomingMessage, cors: CorsPolicy | undefined): number | undefined {
  if ((req.url ?? '').split('?', 1)[0] !== GRAPHQL_ENDPOINT) return 404;
  return originAllowed(req, cors) ? undefined : 403;
}

/** A refusal's answer: its status, its fields (Retry-After), and its reason as a GraphQL error when there is one. */
export interface UpgradeAnswer {
  status: number;
  headers?: Record<string, string>;
  message?: string;
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
  return `HTTP/1.1 ${STATUS_LINES[status]}\r\n${fields.join('')}\r\n${body}`;
}

/** Answers a refused upgrade (no body unless it has a message), and writes its access-log line as any request's. */
export function refuseUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  answer: UpgradeAnswer,
  { accessLog, clientAddress }: { accessLog: AccessLog; clientAddress: string },
): void {
  socket.end(responseOf(answer));
  const attempt = new WebSocketOperation(req, randomUUID());
  attempt.clientAddress = clientAddress;
  attempt.res.statusCode = answer.status;
  accessLog(attempt, performance.now());
}
