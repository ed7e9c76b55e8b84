import type { Logger } from 'pino';
import { ClientGoneError, DomainError } from '../errors.ts';
import { rootCause } from './masked-errors.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

/**
 * Yoga speaks through this adapter so its lines land in our JSON log. It logs each error it masks
 * once: expected conditions (database unavailable) as one warn line without a stack, bugs with one.
 * Disabled levels cost nothing: Yoga calls debug() several times for every request.
 */
export function createYogaLogger(logger: Logger) {
  const forward = (level: Level) => {
    if (!logger.isLevelEnabled(level)) return () => {};
    return (...args: unknown[]) => {
      const error = args.find((arg) => arg instanceof Error);
      const text = args
        .filter((arg) => !(arg instanceof Error))
        .map(String)
        .join(' ');
      if (!error) return logger[level](text || 'yoga');
      const cause = rootCause(error);
      if (cause instanceof DomainError && cause.expected) {
        // A client that hung up is routine; an unavailable database is worth a look.
        return logger[cause instanceof ClientGoneError ? 'info' : 'warn']({ code: cause.code }, cause.message);
      }
      logger[level]({ err: cause }, text || (cause as Error).message || 'yoga');
    };
  };
  return { debug: forward('debug'), info: forward('info'), warn: forward('warn'), error: forward('error') };
}
