import { jsonStringBound, writeBytes, writeDigits, writeJsonString, writeTenths } from '../json-bytes.ts';
import type { TraceFields } from '../telemetry/log-fields.ts';

/** What one request's line says, kept until lines are built: the request's own strings, not copies. */
export interface AccessRecord {
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
  /** On a 401 or 429 only: where a key-guessing run comes from. '' otherwise. */
  clientAddress: string;
}

export const blankRecord = (): AccessRecord => ({
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
  clientAddress: '',
});

export const ANSWERED = 'request';
// A client that hangs up before its answer is routine on the internet, not a server error.
export const LEFT = 'client closed the connection before the response';

/** The fields of a record as pino is given them: the line's fields, in its order, without level, time and msg. */
export function accessFields(record: AccessRecord): Record<string, unknown> {
  const { trace, status, streamEnd, keyId, documentId, clientAddress } = record;
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
    clientAddress: clientAddress || undefined,
  };
}

const bytesOf = (text: string) => Buffer.from(text, 'utf8');

/**
 * The line's fixed parts, as bytes once: the line pino writes for a logger whose level number for
 * info is `level` and whose bindings are `bindings` (its default epoch-milliseconds time).
 */
export function linePartsFor(level: number, bindings: Record<string, unknown>) {
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
    clientAddress: bytesOf(',"clientAddress":'),
    answered: bytesOf(`,"msg":"${ANSWERED}"}\n`),
    left: bytesOf(`,"msg":"${LEFT}"}\n`),
  };
  // Every fixed part once (the bindings twice), and room for the numbers (time, status, ms, events) and the quotes.
  const fixedBytes = Object.values(parts).reduce((sum, part) => sum + part.length, 0) + 96;
  return { ...parts, fixedBytes };
}

export type LineParts = ReturnType<typeof linePartsFor>;

/** The most bytes a record's line can take. */
export function lineBound(parts: LineParts, record: AccessRecord): number {
  const { trace, id, method, url, streamEnd, keyId, documentId, clientAddress } = record;
  const traced = trace ? trace.trace_id.length + trace.span_id.length + trace.trace_flags.length : 0;
  const named = keyId.length + documentId.length + clientAddress.length + streamEnd.length;
  const fields = id.length + method.length + url.length + named;
  return parts.fixedBytes + jsonStringBound(traced + fields);
}

/** `,"name":"value"` when there is a value. */
function writeField(out: Buffer, at: number, name: Uint8Array, value: string): number {
  return value ? writeJsonString(out, writeBytes(out, at, name), value) : at;
}

/** The line pino would write for accessFields(record), as UTF-8 from `at`; returns where it ends. */
export function writeLine(out: Buffer, at: number, parts: LineParts, record: AccessRecord): number {
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
  end = writeField(out, end, parts.clientAddress, record.clientAddress);
  return writeBytes(out, end, record.status !== 0 ? parts.answered : parts.left);
}
