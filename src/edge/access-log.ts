import type { Logger } from 'pino';
import type { RequestScope } from '../http/request-scope.ts';
import type { TraceFields } from '../telemetry/log-fields.ts';

/**
 * One JSON line per request once its response is sent (or the client went away), with the request
 * id the client got back. Written here rather than with pino-http, whose child logger and whole
 * request/response serialisation cost more than the rest of the edge. While tracing, the request's
 * trace and server span ids are given explicitly: the line is written from the response's 'close'
 * event, whose context is not necessarily the request's.
 */
export function createAccessLog(logger: Logger) {
  const enabled = logger.isLevelEnabled('info');
  return ({ req, res, id, startedAt, keyId, documentId }: RequestScope, trace?: TraceFields): void => {
    if (!enabled) return;
    const line = {
      reqId: id,
      method: req.method,
      url: req.url,
      status: res.statusCode,
      ms: Math.round((performance.now() - startedAt) * 10) / 10,
      keyId: keyId || undefined,
      // The published document a GraphQL request ran by id: a POST's URL does not show it.
      documentId: documentId || undefined,
    };
    const logged = trace ? { ...trace, ...line } : line;
    // A client that hangs up before its answer is routine on the internet, not a server error.
    if (res.writableFinished) logger.info(logged, 'request');
    else logger.info({ ...logged, status: undefined }, 'client closed the connection before the response');
  };
}
