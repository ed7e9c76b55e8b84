import type { Db } from 'mongodb';
import type { Logger } from 'pino';

/**
 * Past this many pets the embedded FerretDB answers a get too slowly even for one client (it scans
 * every document per query; docs/benchmarks.md has the curve): time for MongoDB.
 */
export const EMBEDDED_PETS_LIMIT = 5_000;
const CHECK_EVERY_MS = 15 * 60 * 1000;

/** Warns at start and then every 15 minutes while the embedded store holds more pets than it serves well. */
export function warnWhenEmbeddedStoreIsLarge(db: Db, logger: Logger): () => void {
  const check = async () => {
    const pets = await db.collection('pets').estimatedDocumentCount();
    if (pets > EMBEDDED_PETS_LIMIT) {
      logger.warn(
        { pets, limit: EMBEDDED_PETS_LIMIT },
        `the embedded FerretDB holds ${pets} pets; past ${EMBEDDED_PETS_LIMIT} every query slows down (it scans all of them): set MONGODB_URI to a MongoDB`,
      );
    }
  };
  const run = () =>
    void check().catch((error: unknown) => logger.debug({ err: error }, 'could not count the stored pets'));
  run();
  const timer = setInterval(run, CHECK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
