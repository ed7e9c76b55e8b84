import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Exchange } from '../http/exchange.ts';
import { jsonStringBound, writeBytes, writeDigits, writeJsonString, writeTenths } from '../json-bytes.ts';
import { type LogBatch, logBatchOf } from '../logger.ts';
import type { TraceFields } from '../telemetry/log-fields.ts';

/** What one request's line says, kept until lines are built: the request's own strings, not copies. */
interface AccessRecord {
  time: number;
  trace: TraceFields | undefined;
  id: string;
  method: string;
  url: string;
  /** 0 when the client left before its answer. */
  status: number;
  tenthsOfMs: number;
  /** A subscription stream's events delivered; read only when `streamEnd` is set. */
  events: number;
  /** Why the request's subscription stream ended ('' when it carried none). */
  streamEnd: string;
  keyId: string;
  documentId: string;
  /** The MCP tool called ('' for any other request). */
  tool: string;
  /** On a 401 or 429 only: where a key-guessing run comes from. '' otherwise. */
  clientAddress: string;
}

const blankRecord = (): AccessRecord => ({
  time: 0,
  trace: undefined,
  id: '',
  method: '',
  url: '',
  status: 0,
  tenthsOfMs: 0,
  events: 0,
  streamEnd: '',
  keyId: '',
  documentId: '',
  tool: '',
  clientAddress: '',
});

export const ANSWERED = 'request';
// A client that hangs up before its answer is routine on the internet, not a server error.
export const LEFT = 'client closed the connection before the response';

/** The fields of a record as pino is given them: the line's fields, in its order, without level, time and msg. */
function accessFields(record: AccessRecord): Record<string, unknown> {
  const { trace, status, streamEnd, keyId, documentId, tool, clientAddress } = record;
  return {
    ...trace,
    reqId: record.id,
    method: record.method,
    url: record.url || undefined,
    status: status === 0 ? undefined : status,
    ms: record.tenthsOfMs / 10,
    events: streamEnd ? record.events : undefined,
    streamEnd: streamEnd || undefined,
    keyId: keyId || undefined,
    // The published document a GraphQL request ran by id: a POST's URL does not show it.
    documentId: documentId || undefined,
    tool: tool || undefined,
    clientAddress: clientAddress || undefined,
  };
}

const bytesOf = (text: string) => Buffer.from(text, 'utf8');

/**
 * The line's fixed parts, as bytes once: the line pino writes for a logger whose level number for
 * info is `level` and whose bindings are `bindings` (its default epoch-milliseconds time).
 */
function linePartsFor(level: number, bindings: Record<string, unknown>) {
  const bound = JSON.stringify(bindings).slice(1, -1);
  const bindingsJson = bound === '' ? '' : `,${bound}`;
  const parts = {
    start: bytesOf(`{"level":${level},"time":`),
    bindings: bytesOf(bindingsJson),
    // With no trace ids between them (untraced, the usual case), the bindings and reqId's name are one copy.
    bindingsReqId: bytesOf(`${bindingsJson},"reqId":`),
    traceId: bytesOf(',"trace_id":'),
    spanId: bytesOf(',"span_id":'),
    traceFlags: bytesOf(',"trace_flags":'),
    reqId: bytesOf(',"reqId":'),
    method: bytesOf(',"method":'),
    url: bytesOf(',"url":'),
    status: bytesOf(',"status":'),
    ms: bytesOf(',"ms":'),
    events: bytesOf(',"events":'),
    streamEnd: bytesOf(',"streamEnd":'),
    keyId: bytesOf(',"keyId":'),
    documentId: bytesOf(',"documentId":'),
    tool: bytesOf(',"tool":'),
    clientAddress: bytesOf(',"clientAddress":'),
    answered: bytesOf(`,"msg":"${ANSWERED}"}\n`),
    left: bytesOf(`,"msg":"${LEFT}"}\n`),
  };
  // Every fixed part once (the bindings twice), and room for the numbers (time, status, ms, events) and the quotes.
  const fixedBytes = Object.values(parts).reduce((sum, part) => sum + part.length, 0) + 96;
  return { ...parts, fixedBytes };
}

type LineParts = ReturnType<typeof linePartsFor>;

/** The most bytes a record's line can take. */
function lineBound(parts: LineParts, record: AccessRecord): number {
  const { trace, id, method, url, streamEnd, keyId, documentId, tool, clientAddress } = record;
  const traced = trace ? trace.trace_id.length + trace.span_id.length + trace.trace_flags.length : 0;
  const named = keyId.length + documentId.length + tool.length + clientAddress.length + streamEnd.length;
  const fields = id.length + method.length + url.length + named;
  return parts.fixedBytes + jsonStringBound(traced + fields);
}

/** `,"name":"value"` when there is a value. */
function writeField(out: Buffer, at: number, name: Uint8Array, value: string): number {
  return value ? writeJsonString(out, writeBytes(out, at, name), value) : at;
}

/** The line pino would write for accessFields(record), as UTF-8 from `at`; returns where it ends. */
function writeLine(out: Buffer, at: number, parts: LineParts, record: AccessRecord): number {
  let end = writeDigits(out, writeBytes(out, at, parts.start), record.time);
  const { trace } = record;
  if (trace) {
    end = writeBytes(out, end, parts.bindings);
    end = writeField(out, end, parts.traceId, trace.trace_id);
    end = writeField(out, end, parts.spanId, trace.span_id);
    end = writeField(out, end, parts.traceFlags, trace.trace_flags);
    end = writeBytes(out, end, parts.reqId);
  } else {
    end = writeBytes(out, end, parts.bindingsReqId);
  }
  end = writeJsonString(out, end, record.id);
  end = writeJsonString(out, writeBytes(out, end, parts.method), record.method);
  end = writeField(out, end, parts.url, record.url);
  if (record.status !== 0) end = writeDigits(out, writeBytes(out, end, parts.status), record.status);
  end = writeTenths(out, writeBytes(out, end, parts.ms), record.tenthsOfMs);
  if (record.streamEnd !== '') {
    end = writeDigits(out, writeBytes(out, end, parts.events), record.events);
    end = writeField(out, end, parts.streamEnd, record.streamEnd);
  }
  end = writeField(out, end, parts.keyId, record.keyId);
  end = writeField(out, end, parts.documentId, record.documentId);
  end = writeField(out, end, parts.tool, record.tool);
  end = writeField(out, end, parts.clientAddress, record.clientAddress);
  return writeBytes(out, end, record.status !== 0 ? parts.answered : parts.left);
}

/** At most this many requests' lines wait to be built together, where the destination allows it. */
export const ACCESS_LINES_HELD_BACK = 32;

/** What a line reads: an HTTP exchange, or a WebSocket operation (subscriptions/websocket-operation.ts). */
export type LoggedExchange = Pick<
  Exchange,
  'id' | 'startedAt' | 'keyId' | 'documentId' | 'face' | 'path' | 'stream' | 'clientAddress'
> & {
  /** Only HTTP exchanges call MCP tools. */
  readonly tool?: string;
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
  // The request id (a token or a UUID, listener.ts) and the method (a token, Node's parser).
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
  record.tool = exchange.tool ?? '';
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
