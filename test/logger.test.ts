import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger, LOG_BATCH_INTERVAL_MS } from '../src/logger.ts';

const directory = mkdtempSync(join(tmpdir(), 'logger-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const linesOf = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

describe('the service logger writes its lines in batches, losing none', () => {
  it('a lone line reaches the file within the batch interval, whole and in JSON', async () => {
    const file = join(directory, 'lone.log');
    const logger = createLogger('info', file);
    const started = performance.now();
    logger.info({ reqId: 'r1' }, 'lone line');
    await expect.poll(() => linesOf(file).length, { timeout: 2_000, interval: 10 }).toBe(1);
    const waitedMs = performance.now() - started;
    console.info(`[logger] a lone line was in the file after ${waitedMs.toFixed(0)} ms`);
    expect(JSON.parse(linesOf(file)[0] as string)).toMatchObject({ level: 30, reqId: 'r1', msg: 'lone line' });
    expect(waitedMs).toBeLessThan(LOG_BATCH_INTERVAL_MS + 1_000);
  });

  it('every line of a burst is there, in order, when the process exits straight after it', async () => {
    const file = join(directory, 'exit.log');
    const lines = 20_000;
    const script = [
      `const { createLogger } = await import(${JSON.stringify(new URL('../src/logger.ts', import.meta.url).href)});`,
      `const logger = createLogger('info', ${JSON.stringify(file)});`,
      `for (let n = 0; n < ${lines}; n++) logger.info({ n }, 'burst');`,
      'process.exit(3);',
    ].join('\n');
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 30_000,
    });
    await expect(run).rejects.toMatchObject({ code: 3 });
    const numbers = linesOf(file).map((line) => (JSON.parse(line) as { n: number }).n);
    expect(numbers).toHaveLength(lines);
    expect(numbers.every((n, index) => n === index)).toBe(true);
  });
});
