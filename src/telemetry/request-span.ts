import { trace } from '@opentelemetry/api';
import { recordErrors } from './graphql-spans.ts';
import { type TraceFields, traceFieldsOf } from './log-fields.ts';

/** What the edge does for tracing, given to it only while tracing is on. */
export function createRequestTracing() {
  return {
    /**
     * Once the request is routed: its server span takes the route's template as name and http.route
     * (never the raw path, which clients choose). Returns the ids the request's access-log line carries.
     */
    routed(method: string, route: string | undefined): TraceFields | undefined {
      // The server span instrumentation-http started; none on untraced paths.
      const span = trace.getActiveSpan();
      if (!span) return undefined;
      if (route !== undefined) span.updateName(`${method} ${route}`).setAttribute('http.route', route);
      return traceFieldsOf(span);
    },
    /** An error nothing below the edge handled (a 500): on the server span. */
    failed(error: unknown): void {
      const span = trace.getActiveSpan();
      if (span) recordErrors(span, [error]);
    },
  };
}

export type RequestTracing = ReturnType<typeof createRequestTracing>;
