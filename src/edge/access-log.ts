import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Exchange } from '../http/exchange.ts';
import { type LogBatch, logBatchOf } from '../logger.ts';
import type { TraceFields } from '../telemetry/log-fields.ts';
import {
  type AccessRecord,
  ANSWERED,
  accessFields,
  blankRecord,
  LEFT,
  lineBound,
  linePartsFor,
  writeLine,
} from './access-line.ts';

/** At most this many requests' lines wait to be built together, where the destination allows it. */
export const ACCESS_LINES_HELD_BACK = 32;

/** What a line reads: an HTTP exchange, or a WebSocket operation (subscriptions/websocket-operation.ts). */
export type LoggedExchange = Pick<
  Exchange,
  'id' | 'startedAt' | 'keyId' | 'documentId' | 'face' | 'path' | 'stream' | 'clientAddress'
> & {
  readonly req: Pick<IncomingMessage, 'method' | 'url'>;
  readonly res: Pick<ServerResponse, 'writableFinished' | 'statusCode'>;
};

export type AccessLog = (exchange: LoggedExchange, endedAt: number, trace?: TraceFields) => void;

/** Fills `record` from the request: its own strings, no copies. */
function recordOf(
  record: AccessRecord,
  exchange: LoggedExchange,
  endedAt: number,
  trace: TraceFields | undefined,
): void {
  const { req, res, id, startedAt, keyId, documentId } = exchange;
  record.time = Date.now();
  record.trace = trace;
  // The request id (a token or a UUID, request-id.ts) and the method (a token, Node's parser).
  record.id = id;
  record.method = req.method ?? '';
  // A GraphQL GET's query string is its document and variables, which logs never hold (docs/security.md).
  record.url = exchange.face === 'graphql' ? exchange.path : (req.url ?? '');
  const status = res.writableFinished ? res.statusCode : 0;
  record.status = status;
  record.tenthsOfMs = Math.round((endedAt - startedAt) * 10);
  // A stream whose response closed before it ended itself was left by its client.
  const { stream } = exchange;
  record.events = stream ? stream.events : 0;
  record.streamEnd = stream ? (stream.end ?? 'client') : '';
  record.keyId = keyId;
  record.documentId = documentId;
  // As TRUST_PROXY's rule reads it (authenticate.ts), the address the failed-authentication limit counts.
  record.clientAddress = status === 401 || status === 429 ? exchange.clientAddress : '';
}

/**
 * Into the service's own batch: a request's end only records its fields, and lines are built as
 * bytes (the line pino would write) up to ACCESS_LINES_HELD_BACK at a time, since this runs on every
 * request and building each at its request's end cost more (docs/benchmarks.md). The batch releases
 * them before any other line and before every write, so they keep their place and wait no longer.
 */
function batchedAccessLog(logger: Logger, batch: LogBatch): AccessLog {
  const parts = linePartsFor(logger.levels.values.info ?? 30, logger.bindings());
  const records = Array.from({ length: ACCESS_LINES_HELD_BACK }, blankRecord);
  let waiting = 0;
  let scratch = Buffer.allocUnsafe(64 * 1024);

  const release = () => {
    if (waiting === 0) return;
    let bound = 0;
    for (let index = 0; index < waiting; index++) bound += lineBound(parts, records[index] as AccessRecord);
    if (bound > scratch.length) scratch = Buffer.allocUnsafe(bound);
    let end = 0;
    for (let index = 0; index < waiting; index++) end = writeLine(scratch, end, parts, records[index] as AccessRecord);
    // None waits any more before the hand-over: a write it causes releases again and finds none.
    waiting = 0;
    batch.writeBytes(scratch.subarray(0, end));
  };
  batch.holdBack(release);

  return (exchange, endedAt, trace) => {
    recordOf(records[waiting] as AccessRecord, exchange, endedAt, trace);
    if (++waiting === records.length) release();
  };
}

/** Any other logger (a child, a test's, another destination): pino writes the line itself. */
function loggedAccessLog(logger: Logger): AccessLog {
  const record = blankRecord();
  return (exchange, endedAt, trace) => {
    recordOf(record, exchange, endedAt, trace);
    logger.info(accessFields(record), record.status !== 0 ? ANSWERED : LEFT);
  };
}

/**
 * One JSON line per request once its response is sent (or the client went away), with the request
 * id the client got back: level, time, the logger's bindings, the fields in this order, msg.
 * `endedAt` is the request's end by `performance.now()`, the edge's one reading for this line and
 * the request metrics. While tracing, the request's trace and server span ids are given explicitly:
 * the line is recorded from the response's 'close' event, whose context is not necessarily the
 * request's.
 */
export function createAccessLog(logger: Logger): AccessLog {
  if (!logger.isLevelEnabled('info')) return () => {};
  const batch = logBatchOf(logger);
  return batch ? batchedAccessLog(logger, batch) : loggedAccessLog(logger);
}
