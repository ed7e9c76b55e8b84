import { isSpanContextValid, type Span, trace } from '@opentelemetry/api';

/** The names OpenTelemetry's own log bridges use, so a log backend links a line to its trace. */
export interface TraceFields {
  trace_id: string;
  span_id: string;
  /** '01' when the trace is sampled (exported), '00' when not. */
  trace_flags: string;
}

export function traceFieldsOf(span: Span | undefined): TraceFields | undefined {
  const context = span?.spanContext();
  if (!context || !isSpanContextValid(context)) return undefined;
  return {
    trace_id: context.traceId,
    span_id: context.spanId,
    trace_flags: context.traceFlags.toString(16).padStart(2, '0'),
  };
}

/**
 * pino's mixin while tracing: every line written under a span carries its ids (none outside one).
 * A new object each time: pino merges the line's own fields into it.
 */
export function activeTraceFields(): object {
  return traceFieldsOf(trace.getActiveSpan()) ?? {};
}
