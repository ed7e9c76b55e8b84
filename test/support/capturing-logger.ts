import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';

/** One JSON line of the log, parsed. */
export type LogLine = Record<string, unknown> & { level: number; msg?: string };

/** pino's number for the error level. */
export const ERROR_LEVEL = pino.levels.values.error ?? 50;

/** A real pino logger (at `info` unless told) whose lines land, parsed, in `lines`. */
export function capturingLogger(level = 'info'): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as LogLine);
      done();
    },
  });
  return { logger: pino({ level }, sink), lines };
}
