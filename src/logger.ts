import { type Logger, type LoggerOptions, pino } from 'pino';
import { activeTraceFields } from './telemetry/log-fields.ts';

export interface ServiceLoggerOptions {
  /** While tracing: every line written under a span carries trace_id and span_id (a pino mixin). */
  traceContext?: boolean;
}

/** pino's settings for the service's lines; the mixin only when tracing, so no line pays for it otherwise. */
export function loggerOptions(level: string, { traceContext = false }: ServiceLoggerOptions = {}): LoggerOptions {
  return { level, base: { service: 'petstore-gateway' }, ...(traceContext ? { mixin: activeTraceFields } : {}) };
}

/** The service's JSON logger; asynchronous writes (see the README's decisions), flushed at exit. */
export function createLogger(level: string, destination: string | number = 1, options?: ServiceLoggerOptions): Logger {
  return pino(loggerOptions(level, options), pino.destination({ dest: destination, sync: false }));
}
