import { type Logger, pino } from 'pino';

/** The service's JSON logger; asynchronous writes (see the README's decisions), flushed at exit. */
export function createLogger(level: string, destination: string | number = 1): Logger {
  return pino({ level, base: { service: 'petstore-gateway' } }, pino.destination({ dest: destination, sync: false }));
}
