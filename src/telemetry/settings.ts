// What decides whether the service traces, read before anything else is loaded (register.ts): it
// imports nothing, so a service without tracing pays one look at its environment.

/** The resource's service.name unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) says otherwise. */
export const DEFAULT_SERVICE_NAME = 'petstore-gateway';

/**
 * How long the drain gives the last spans to reach the Collector. Bounded on its own because the
 * exporter's timeout (OTEL_EXPORTER_OTLP_TIMEOUT, 10 s) would let a frozen Collector hold the exit.
 */
export const TRACING_FLUSH_DEADLINE_MS = 2_000;

/**
 * Tracing is on when the environment says where spans go (OTLP over HTTP/protobuf), as for any
 * OpenTelemetry SDK; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off again.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}
