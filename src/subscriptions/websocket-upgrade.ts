import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AccessLog } from '../edge/access-log.ts';
import { allowedOrigin, type CorsPolicy } from '../edge/cors.ts';
import { GRAPHQL_ENDPOINT } from '../yoga.ts';
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
  503: '503 Service Unavailable',
};

/** Why the upgrade is refused (its status), or undefined: only /graphql, from an allowed origin. */
export function upgradeRefusal(req: IncomingMessage, cors: CorsPolicy | undefined): number | undefined {
  if ((req.url ?? '').split('?', 1)[0] !== GRAPHQL_ENDPOINT) return 404;
  return originAllowed(req, cors) ? undefined : 403;
}

/** Answers a refused upgrade with its status and no body, and writes its access-log line as any request's. */
export function refuseUpgrade(req: IncomingMessage, socket: Duplex, status: number, accessLog: AccessLog): void {
  socket.end(`HTTP/1.1 ${STATUS_LINES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  const attempt = new WebSocketOperation(req, randomUUID());
  attempt.clientAddress = req.socket.remoteAddress ?? '';
  attempt.res.statusCode = status;
  accessLog(attempt, performance.now());
}
