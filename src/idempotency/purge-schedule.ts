import type { Logger } from 'pino';
import { DomainError } from '../errors.ts';
import type { IdempotentCreates } from './idempotent-create.ts';

/** Expired records are found on lookup anyway; the purge only keeps the collection from growing. */
export const PURGE_EVERY_MS = 10 * 60_000;

/**
 * Deletes expired Idempotency-Key records now and every PURGE_EVERY_MS: FerretDB has no TTL index
 * to do it, and one code path for both databases is one to test. Returns the stop function.
 */
export function schedulePurge(creates: IdempotentCreates, logger: Logger, everyMs = PURGE_EVERY_MS): () => void {
  const purge = () =>
    void creates.purgeExpired().then(
      (deleted) => {
        if (deleted > 0) logger.info({ deleted }, 'purged expired Idempotency-Key records');
      },
      (error: unknown) => {
        // An unavailable or full database is a condition, said in a line; anything else keeps its stack.
        const about =
          error instanceof DomainError && error.expected ? { code: error.code, reason: error.message } : { err: error };
        logger.warn(about, 'purging expired Idempotency-Key records failed');
      },
    );
  purge();
  const timer = setInterval(purge, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
