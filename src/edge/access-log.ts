import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

export interface RequestRecord {
  requestId: string;
  /** From performance.now() when the request arrived. */
  startedAt: number;
  /** Set once the key is known, so the line says who called. */
  keyId?: string;
  /** Probes (/health, /ready) are not logged: a load balancer calls them every few seconds. */
  quiet?: boolean;
}

/**
 * One JSON line per request once its response is sent (or the client went away), with the request
 * id the client got back; the edge calls it when the response closes. Written here rather than with
 * pino-http: that builds a child logger and serialises whole request/response objects per request,
 * which cost more than the rest of the edge.
 */
export function createAccessLog(logger: Logger) {
  const enabled = logger.isLevelEnabled('info');
  return (req: IncomingMessage, res: ServerResponse, record: RequestRecord): void => {
    if (!enabled || record.quiet) return;
    const line = {
      reqId: record.requestId,
      method: req.method,
      url: req.url,
      status: res.statusCode,
      ms: Math.round((performance.now() - record.startedAt) * 10) / 10,
      keyId: record.keyId,
    };
    // A client that hangs up before its answer is routine on the internet, not a server error.
    if (res.writableFinished) logger.info(line, 'request');
    else logger.info({ ...line, status: undefined }, 'client closed the connection before the response');
  };
}
