import { openSync } from 'node:fs';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { activeTraceFields } from './telemetry/log-fields.ts';

/** pino's settings; with `traceContext` lines under a span carry its ids (a mixin only then, at a cost). */
export function loggerOptions(level: string, { traceContext = false } = {}): LoggerOptions {
  return { level, base: { service: 'petstore-gateway' }, ...(traceContext ? { mixin: activeTraceFields } : {}) };
}

/** Lines are written together once this many bytes wait, or after this long. */
export const LOG_BATCH_BYTES = 262_144;
export const LOG_BATCH_INTERVAL_MS = 100;

/** sonic-boom (pino's file writer) in contentMode 'buffer', whose types still say strings. */
interface BufferWriter {
  write(bytes: Buffer): boolean;
}

/**
 * The log destination: lines gather in one reused 256 KB buffer, written synchronously when full, every
 * 100 ms and at exit, so no line is lost at exit and under load each write's fixed cost covers many.
 */
export class LogBatch implements DestinationStream {
  private bytes = Buffer.allocUnsafe(LOG_BATCH_BYTES);
  private used = 0;
  private readonly heldBack: (() => void)[] = [];

  constructor(private readonly writer: BufferWriter) {
    setInterval(() => this.flush(), LOG_BATCH_INTERVAL_MS).unref();
    process.once('exit', () => this.flush());
  }

  /** For a writer that builds lines together (the access log): `release` runs before every line and write. */
  holdBack(release: () => void): void {
    this.heldBack.push(release);
  }

  /** One line from pino. */
  write(line: string): void {
    this.releaseHeldBack();
    // A UTF-16 unit takes at most 3 bytes: only near a full buffer is the exact length needed.
    if (line.length * 3 > LOG_BATCH_BYTES - this.used && Buffer.byteLength(line) > LOG_BATCH_BYTES - this.used) {
      this.flush();
      if (Buffer.byteLength(line) > LOG_BATCH_BYTES) return void this.writer.write(Buffer.from(line));
    }
    this.used += this.bytes.write(line, this.used);
  }

  /** Whole lines already encoded as UTF-8. */
  writeBytes(lines: Uint8Array): void {
    if (lines.length > LOG_BATCH_BYTES - this.used) {
      this.flush();
      if (lines.length > LOG_BATCH_BYTES) return void this.writer.write(Buffer.from(lines));
    }
    this.bytes.set(lines, this.used);
    this.used += lines.length;
  }

  /** Writes what has gathered, held-back lines included. */
  flush(): void {
    this.releaseHeldBack();
    if (this.used === 0) return;
    const gathered = this.bytes.subarray(0, this.used);
    this.used = 0;
    try {
      this.writer.write(gathered);
    } catch (error) {
      // sonic-boom may keep what it could not write, to try again: the next lines need a buffer of their own.
      this.bytes = Buffer.allocUnsafe(LOG_BATCH_BYTES);
      throw error;
    }
  }

  private releaseHeldBack(): void {
    for (const release of this.heldBack) release();
  }
}

const batches = new WeakMap<Logger, LogBatch>();

/** The batch a logger from createLogger writes into: the access log builds its lines into it itself. */
export const logBatchOf = (logger: Logger): LogBatch | undefined => batches.get(logger);

/** The service's JSON logger: lines written in batches, at least every 100 ms, and whatever is left at exit. */
export function createLogger(level: string, destination: string | number = 1, options?: { traceContext?: boolean }) {
  // A path is opened now, not asynchronously: a process that exits at once still leaves its lines.
  const fd = typeof destination === 'string' ? openSync(destination, 'a') : destination;
  const writer = pino.destination({ fd, sync: true, contentMode: 'buffer' }) as unknown as BufferWriter;
  const batch = new LogBatch(writer);
  const logger = pino(loggerOptions(level, options), batch);
  batches.set(logger, batch);
  return logger;
}
