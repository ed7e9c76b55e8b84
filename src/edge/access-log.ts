import { type Logger, pino } from 'pino';
import type { RequestScope } from '../http/request-scope.ts';
import type { TraceFields } from '../telemetry/log-fields.ts';

const { streamSym, chindingsSym, timeSym } = pino.symbols;

const INFO = pino.levels.values.info ?? 30;
const quote = JSON.stringify;

/** `,"name":"value"` for a value the client or a key chose (escaped), nothing when there is none. */
const field = (name: string, value: string | undefined): string => (value ? `,"${name}":${quote(value)}` : '');

/**
 * One JSON line per request once its response is sent (or the client went away), with the request
 * id the client got back. The line is the one pino would write for these fields (level, time, the
 * logger's bindings, the fields in this order, msg), built here directly: pino's generic walk over
 * the same object cost nearly twice as much (README, decisions), and this runs on every request. Lines still go to the logger's
 * own destination, in order with the others. While tracing, the request's trace and server span ids
 * are given explicitly: the line is written from the response's 'close' event, whose context is not
 * necessarily the request's.
 */
export function createAccessLog(logger: Logger) {
  const enabled = logger.isLevelEnabled('info');
  // pino's own parts (pino.symbols): its destination, its bindings as JSON and its clock.
  const pinoParts = logger as unknown as Record<symbol, unknown>;
  const destination = pinoParts[streamSym] as { write(line: string): unknown };
  const time = pinoParts[timeSym] as () => string;
  return ({ req, res, id, startedAt, keyId, documentId }: RequestScope, trace?: TraceFields): void => {
    if (!enabled) return;
    const ms = Math.round((performance.now() - startedAt) * 10) / 10;
    const traced = trace
      ? `${field('trace_id', trace.trace_id)}${field('span_id', trace.span_id)}${field('trace_flags', trace.trace_flags)}`
      : '';
    // A client that hangs up before its answer is routine on the internet, not a server error.
    const finished = res.writableFinished;
    const status = finished ? `,"status":${res.statusCode}` : '';
    const msg = finished ? 'request' : 'client closed the connection before the response';
    destination.write(
      `{"level":${INFO}${time()}${pinoParts[chindingsSym] as string}${traced}` +
        // The request id (a token or a UUID, request-id.ts) and the method (a token, Node's parser) need no escaping.
        `,"reqId":"${id}","method":"${req.method}"${field('url', req.url)}${status},"ms":${ms}` +
        // The published document a GraphQL request ran by id: a POST's URL does not show it.
        `${field('keyId', keyId)}${field('documentId', documentId)},"msg":"${msg}"}\n`,
    );
  };
}
