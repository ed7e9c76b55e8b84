import type { Tracer } from '@opentelemetry/api';

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
