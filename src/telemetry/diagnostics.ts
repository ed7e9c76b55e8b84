import { context, DiagLogLevel, diag, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Logger } from 'pino';

/** A Collector that is down fails every export alike: one line this often says so, with the count since. */
export const TRACING_PROBLEM_LOG_EVERY_MS = 60_000;

/** The SDK reports a failed export as the error serialised to JSON, stack included: its message and code suffice. */
function detailOf(message: string): string {
  try {
    const parsed = JSON.parse(message) as { message?: unknown; code?: unknown };
    if (typeof parsed.message === 'string') return parsed.code ? `${parsed.message} (${parsed.code})` : parsed.message;
  } catch {
    // Not JSON: a plain diagnostic message.
  }
  return message.slice(0, 500);
}

/**
 * The SDK's own warnings and errors (chiefly exports that failed: the Collector down, refusing or
 * too slow, or spans dropped from a full queue) as warn lines of the service's log, at most one a
 * minute. Requests never wait for an export, so this line is the only sign that spans are lost.
 */
export function logTracingProblems(logger: Logger, now: () => number = Date.now): void {
  let loggedAt = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  const report = (message: string) => {
    if (now() - loggedAt < TRACING_PROBLEM_LOG_EVERY_MS) {
      unlogged++;
      return;
    }
    const line = { detail: detailOf(message), problemsSinceLastLine: unlogged };
    // An export may start inside any request's context: the line is about the service, not that request.
    context.with(ROOT_CONTEXT, () => logger.warn(line, 'tracing: spans may be lost (at most one line a minute)'));
    loggedAt = now();
    unlogged = 0;
  };
  const ignore = () => {};
  diag.setLogger(
    { error: report, warn: report, info: ignore, debug: ignore, verbose: ignore },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}
