import { type Db, MongoClient } from 'mongodb';
import { withDeadline } from './deadline.ts';

export interface Database {
  client: MongoClient;
  db: Db;
  /** FerretDB runs findAndModify without a transaction; callers that count on its atomicity need to know. */
  isFerretDb: boolean;
  /** One round trip to the server; the caller bounds it with `signal`. */
  ping(signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Start-up commands: a database that does not answer these in time is not one to serve from. */
const STARTUP_TIMEOUT_MS = 10_000;

/**
 * Timeouts for a request-serving process: the driver's defaults hold a request 30 s in server
 * selection. Operations are bounded by their callers' signals, as driver 7 ignores `timeoutMS`.
 */
export async function connectDatabase(uri: string, dbName: string): Promise<Database> {
  const client = new MongoClient(uri, {
    appName: 'petstore-gateway',
    serverSelectionTimeoutMS: 2_000,
    connectTimeoutMS: 2_000,
    heartbeatFrequencyMS: 1_000,
  });
  await client.connect();
  const db = client.db(dbName);
  const buildInfo = await withDeadline(STARTUP_TIMEOUT_MS, (signal) =>
    db.admin().command({ buildInfo: 1 }, { signal }),
  );
  return {
    client,
    db,
    isFerretDb: 'ferretdbVersion' in buildInfo,
    ping: async (signal) => void (await db.command({ ping: 1 }, { signal })),
    close: () => client.close(),
  };
}
