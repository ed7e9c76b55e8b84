import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';
import { expect } from 'vitest';

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

/** The answer to `send`, with the log lines written from its start until its request's access-log line. */
export async function linesDuring<T extends { headers: Record<string, string | undefined> }>(
  lines: LogLine[],
  send: () => Promise<T>,
): Promise<{ response: T; logged: LogLine[]; requestId: string | undefined }> {
  const from = lines.length;
  const response = await send();
  const requestId = response.headers['x-request-id'];
  expect(requestId).toEqual(expect.any(String));
  const accessLogged = () => lines.slice(from).some((line) => line.reqId === requestId && line.msg === 'request');
  await expect.poll(accessLogged).toBe(true);
  return { response, logged: lines.slice(from), requestId };
}
