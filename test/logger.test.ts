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

  /** Runs `logging` (a statement over `logger`) in a process that exits with 3 straight after it. */
  async function logThenExit(file: string, logging: string): Promise<void> {
    const script = [
      `const { createLogger } = await import(${JSON.stringify(new URL('../src/logger.ts', import.meta.url).href)});`,
      `const logger = createLogger('info', ${JSON.stringify(file)});`,
      logging,
      'process.exit(3);',
    ].join('\n');
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 30_000,
    });
    await expect(run).rejects.toMatchObject({ code: 3 });
  }

  it('every line of a burst is there, in order, when the process exits straight after it', async () => {
    const file = join(directory, 'exit.log');
    const lines = 20_000;
    await logThenExit(file, `for (let n = 0; n < ${lines}; n++) logger.info({ n }, 'burst');`);
    const numbers = linesOf(file).map((line) => (JSON.parse(line) as { n: number }).n);
    expect(numbers).toHaveLength(lines);
    expect(numbers.every((n, index) => n === index)).toBe(true);
  });

  it.each([
    ['ends by itself', ''],
    ['calls process.exit', 'process.exit(0);'],
  ])('the last lines reach standard output, a pipe, when a process that just logged them %s', async (_name, ending) => {
    // The built logger in plain node, as `npm start` runs it: under tsx, its loader's own thread
    // kept the process alive long enough to hide the lines an exit once lost.
    const script = [
      `const { createLogger } = await import(${JSON.stringify(new URL('../dist/logger.js', import.meta.url).href)});`,
      "const logger = createLogger('info');",
      "for (let n = 0; n < 3; n++) logger.info({ n }, 'last words');",
      ending,
    ].join('\n');
    const run = promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 });
    const lines = (await run).stdout.split('\n').filter(Boolean);
    expect(lines.map((line) => (JSON.parse(line) as { n: number }).n)).toEqual([0, 1, 2]);
  });

  it('lines of several bytes per character, and one longer than a whole batch, come out whole', async () => {
    const file = join(directory, 'wide.log');
    // 2- and 3-byte characters and a surrogate pair: lines whose byte length differs from their length,
    // enough of them (about 600 KB) to fill more than two batches, then one line of 100,000 three-byte characters.
    await logThenExit(
      file,
      [
        `for (let n = 0; n < 2_000; n++) logger.info({ n, name: 'é€🐈'.repeat(n % 50) }, 'wide');`,
        `logger.info({ n: 2_000, name: '€'.repeat(100_000) }, 'long');`,
      ].join('\n'),
    );
    const parsed = linesOf(file).map((line) => JSON.parse(line) as { n: number; name: string });
    expect(parsed.map(({ n }) => n)).toEqual(Array.from({ length: 2_001 }, (_, n) => n));
    expect(parsed.slice(0, 2_000).every(({ n, name }) => name === 'é€🐈'.repeat(n % 50))).toBe(true);
    expect(parsed[2_000]?.name).toBe('€'.repeat(100_000));
  });
});
