// What decides whether the service traces, read before anything else is loaded (register.ts): it
// imports nothing but a type, so a service without tracing pays one look at its environment.
import type { Tracer } from '@opentelemetry/api';

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

/** How the last spans' export ended at shutdown. */
export type FlushOutcome = 'flushed' | 'failed' | 'timed out';

/** Tracing as started by register.ts (or a test), for the composition root and the drain. */
export interface RunningTracing {
  tracer: Tracer;
  /** Where spans go, for the start-up log line: the endpoint's origin, never its credentials. */
  destination: string;
  /** Exports what is queued and stops the SDK; gives up after `deadlineMs`. */
  stop(deadlineMs: number): Promise<FlushOutcome>;
}

let running: RunningTracing | undefined;

/** Undefined unless tracing was started in this process: main.ts then installs nothing of it. */
export const runningTracing = (): RunningTracing | undefined => running;

export function setRunningTracing(tracing: RunningTracing | undefined): void {
  running = tracing;
}
