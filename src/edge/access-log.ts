import type { Logger } from 'pino';
import type { RequestScope } from '../http/request-scope.ts';

/**
 * One JSON line per request once its response is sent (or the client went away), with the request
 * id the client got back. Written here rather than with pino-http, whose child logger and whole
 * request/response serialisation cost more than the rest of the edge.
 */
export function createAccessLog(logger: Logger) {
  const enabled = logger.isLevelEnabled('info');
  return ({ req, res, id, startedAt, keyId }: RequestScope): void => {
    if (!enabled) return;
    const line = {
      reqId: id,
      method: req.method,
      url: req.url,
      status: res.statusCode,
      ms: Math.round((performance.now() - startedAt) * 10) / 10,
      keyId: keyId || undefined,
    };
    // A client that hangs up before its answer is routine on the internet, not a server error.
    if (res.writableFinished) logger.info(line, 'request');
    else logger.info({ ...line, status: undefined }, 'client closed the connection before the response');
  };
}
