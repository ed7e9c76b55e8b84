import { type Logger, pino } from 'pino';
import type { RequestScope } from '../http/request-scope.ts';
import { jsonStringBound, writeBytes, writeDigits, writeJsonString, writeTenths } from '../json-bytes.ts';
import { LogBatch } from '../logger.ts';
import type { TraceFields } from '../telemetry/log-fields.ts';

const { streamSym, chindingsSym, timeSym } = pino.symbols;

/** At most this many requests' lines wait to be built together, where the destination allows it. */
export const ACCESS_LINES_HELD_BACK = 32;

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
  keyId: string;
  documentId: string;
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
  keyId: '',
  documentId: '',
  clientAddress: '',
});

const bytesOf = (text: string) => Buffer.from(text, 'utf8');

/** The line's fixed parts, as bytes once. `bindings` is pino's JSON of the logger's own fields. */
function linePartsFor(bindings: string) {
  const parts = {
    start: bytesOf(`{"level":${pino.levels.values.info ?? 30},"time":`),
    bindings: bytesOf(bindings),
    // With no trace ids between them (untraced, the usual case), the bindings and reqId's name are one copy.
    bindingsReqId: bytesOf(`${bindings},"reqId":`),
    traceId: bytesOf(',"trace_id":'),
    spanId: bytesOf(',"span_id":'),
    traceFlags: bytesOf(',"trace_flags":'),
    reqId: bytesOf(',"reqId":'),
    method: bytesOf(',"method":'),
    url: bytesOf(',"url":'),
    status: bytesOf(',"status":'),
    ms: bytesOf(',"ms":'),
    keyId: bytesOf(',"keyId":'),
    documentId: bytesOf(',"documentId":'),
    clientAddress: bytesOf(',"clientAddress":'),
    answered: bytesOf(',"msg":"request"}\n'),
    // A client that hangs up before its answer is routine on the internet, not a server error.
    left: bytesOf(',"msg":"client closed the connection before the response"}\n'),
  };
  // Every fixed part once (the bindings twice), and room for the numbers (time, status, ms) and the quotes.
  const fixedBytes = Object.values(parts).reduce((sum, part) => sum + part.length, 0) + 64;
  return { ...parts, fixedBytes };
}

type LineParts = ReturnType<typeof linePartsFor>;

/** The most bytes a record's line can take. */
function lineBound(parts: LineParts, record: AccessRecord): number {
  const { trace, id, method, url, keyId, documentId, clientAddress } = record;
  const traced = trace ? trace.trace_id.length + trace.span_id.length + trace.trace_flags.length : 0;
  const fields = id.length + method.length + url.length + keyId.length + documentId.length + clientAddress.length;
  return parts.fixedBytes + jsonStringBound(traced + fields);
}

/** `,"name":"value"` when there is a value. */
function writeField(out: Buffer, at: number, name: Uint8Array, value: string): number {
  return value ? writeJsonString(out, writeBytes(out, at, name), value) : at;
}

/** The line pino would write for the record's fields, in this order; returns where it ends. */
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
  end = writeField(out, end, parts.keyId, record.keyId);
  // The published document a GraphQL request ran by id: a POST's URL does not show it.
  end = writeField(out, end, parts.documentId, record.documentId);
  end = writeField(out, end, parts.clientAddress, record.clientAddress);
  return writeBytes(out, end, record.status !== 0 ? parts.answered : parts.left);
}

/**
 * One JSON line per request once its response is sent (or the client went away), with the request
 * id the client got back. The line is the one pino would write for these fields (level, time, the
 * logger's bindings, the fields in this order, msg), written here as bytes, since this runs on
 * every request: pino's generic walk over the same object cost nearly twice a template string, and
 * the template string 0.8 µs a line in a loop against 0.5 µs for the bytes (README, decisions).
 * Into the service's own destination (a LogBatch), a request's end only records its fields, and up
 * to 32 lines are built together in one loop: built one at a time at each end, they measured nearly
 * twice the cost. The batch releases them before any other line and before every write, so they
 * keep their place and wait no longer than others. Any other destination gets each line at once.
 * `endedAt` is the request's end by `performance.now()`, the edge's one reading for this line and
 * the request metrics. While tracing, the request's trace and server span ids are given explicitly:
 * the line is recorded from the response's 'close' event, whose context is not necessarily the
 * request's.
 */
export function createAccessLog(logger: Logger): (scope: RequestScope, endedAt: number, trace?: TraceFields) => void {
  if (!logger.isLevelEnabled('info')) return () => {};
  // pino's own parts (pino.symbols): its destination, its bindings as JSON and its clock.
  const pinoParts = logger as unknown as Record<symbol, unknown>;
  if (pinoParts[timeSym] !== pino.stdTimeFunctions.epochTime) {
    throw new Error("the access log writes pino's default time (epoch milliseconds); this logger has another");
  }
  const parts = linePartsFor(pinoParts[chindingsSym] as string);
  const destination = pinoParts[streamSym] as LogBatch | { write(line: string): unknown };
  const batch = destination instanceof LogBatch ? destination : undefined;
  const records = Array.from({ length: batch ? ACCESS_LINES_HELD_BACK : 1 }, blankRecord);
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
    if (batch) batch.writeBytes(scratch.subarray(0, end));
    else destination.write(scratch.toString('utf8', 0, end));
  };
  batch?.holdBack(release);

  return (scope: RequestScope, endedAt: number, trace?: TraceFields): void => {
    const { req, res, id, startedAt, keyId, documentId } = scope;
    const record = records[waiting] as AccessRecord;
    record.time = Date.now();
    record.trace = trace;
    // The request id (a token or a UUID, request-id.ts) and the method (a token, Node's parser).
    record.id = id;
    record.method = req.method ?? '';
    // A GraphQL GET's query string is its document and variables, which logs never hold (docs/security.md).
    record.url = scope.face === 'graphql' ? scope.path : (req.url ?? '');
    const status = res.writableFinished ? res.statusCode : 0;
    record.status = status;
    record.tenthsOfMs = Math.round((endedAt - startedAt) * 10);
    record.keyId = keyId;
    record.documentId = documentId;
    // As TRUST_PROXY's rule reads it (authenticate.ts), the address the failed-authentication limit counts.
    record.clientAddress = status === 401 || status === 429 ? scope.clientAddress : '';
    if (++waiting === records.length) release();
  };
}
