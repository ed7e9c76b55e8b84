import type { Logger } from 'pino';
import type { ErrorLog } from '../graphql/error-log.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

/**
 * Yoga speaks through this adapter so its lines land in our JSON log. Errors it masks were logged by
 * the error log already, with their request; any other reaches the error log here. Disabled levels
 * cost nothing: Yoga calls debug() several times for every request.
 */
export function createYogaLogger(logger: Logger, errorLog: ErrorLog) {
  const forward = (level: Level) => {
    if (!logger.isLevelEnabled(level)) return () => {};
    return (...args: unknown[]) => {
      const error = args.find((arg) => arg instanceof Error);
      if (error) return errorLog.wasLogged(error) ? undefined : errorLog.log(error, undefined);
      const text = args.map(String).join(' ');
      logger[level](text || 'yoga');
    };
  };
  return { debug: forward('debug'), info: forward('info'), warn: forward('warn'), error: forward('error') };
}
