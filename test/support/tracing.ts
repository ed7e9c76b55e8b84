import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { expect } from 'vitest';
import { loggerOptions } from '../../src/logger.ts';
import type { LogLine } from './capturing-logger.ts';
import { finishedSpans } from './traced-process.ts';

/** A caller's trace context: the W3C header and the ids in it. */
export interface CallerTrace {
  traceId: string;
  spanId: string;
  traceparent: string;
}

/** A new trace, as a client or a balancer in front would start it (sampled). */
export function callerTrace(): CallerTrace {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

export const idOf = (span: ReadableSpan) => span.spanContext().spanId;
export const parentIdOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** The spans of one trace ended so far. */
export function spansOf(traceId: string): ReadableSpan[] {
  return finishedSpans.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
}

/** The trace once its server span has ended (after the response: poll), and that span. */
export async function requestTrace(traceId: string): Promise<{ server: ReadableSpan; spans: ReadableSpan[] }> {
  const server = () => spansOf(traceId).find((span) => span.kind === SpanKind.SERVER);
  await expect.poll(server, { timeout: 5_000 }).toBeDefined();
  return { server: server() as ReadableSpan, spans: spansOf(traceId) };
}

/** The spans whose parent is `parent`, in the order they started. */
export function childrenOf(spans: ReadableSpan[], parent: ReadableSpan): ReadableSpan[] {
  return spans
    .filter((span) => parentIdOf(span) === idOf(parent))
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
}

/** The service's own logger settings while tracing (the trace-id mixin), its lines parsed into `lines`. */
export function tracedCapturingLogger() {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as LogLine);
      done();
    },
  });
  return { logger: pino(loggerOptions('info', { traceContext: true }), sink), lines };
}

export { finishedSpans, testTracing } from './traced-process.ts';
