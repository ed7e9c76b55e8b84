import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startRefreshLoop } from '../src/db/refresh-loop.ts';

function capturedLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('a refresh loop over something kept in the database', () => {
  it('when it stops during a read whose client is then closed, then stop settles after that read and no outage is logged', async () => {
    const { logger, lines } = capturedLogger();
    let closeClient: (error: Error) => void = () => {};
    let reads = 0;
    const loop = startRefreshLoop({
      refresh: () => {
        reads += 1;
        return new Promise<void>((_, reject) => {
          closeClient = reject;
        });
      },
      intervalMs: 10,
      logger,
      what: 'the test records',
    });
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    closeClient(new Error('Operation interrupted because client was closed'));
    await stopping;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(reads).toBe(1);
    expect(lines).toEqual([]);
  });

  it('when a read fails while running, then the outage is logged once and its end once', async () => {
    const { logger, lines } = capturedLogger();
    let outcomes = [false, false, true];
    const loop = startRefreshLoop({
      refresh: async () => {
        const ok = outcomes.shift() ?? true;
        if (!ok) throw new Error('no database');
      },
      intervalMs: 5,
      logger,
      what: 'the test records',
    });
    await loop.firstRead;
    await new Promise((resolve) => setTimeout(resolve, 60));
    await loop.stop();
    outcomes = [];
    expect(lines.map((line) => line.msg)).toEqual([
      'cannot read the test records; using the ones known so far',
      'the test records can be read again',
    ]);
  });
});
