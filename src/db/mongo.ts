import { type Db, MongoClient } from 'mongodb';

export interface Database {
  client: MongoClient;
  db: Db;
  /** FerretDB runs findAndModify without a transaction; callers that count on its atomicity need to know. */
  isFerretDb: boolean;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** /ready answers within 2 s; its ping gives up a little sooner so the connection is freed, not left waiting. */
const PING_TIMEOUT_MS = 1_500;
/** Start-up commands: a database that does not answer these in time is not one to serve from. */
const STARTUP_TIMEOUT_MS = 10_000;

/**
 * Connects with timeouts suited to a request-serving process. The driver's defaults would hold a
 * request 30 s (server selection) and notice a stalled server only every 10 s. Every operation is
 * also bounded by its caller's AbortSignal (the repository's deadline): driver 7 made `timeoutMS`
 * (CSOT) a no-op, and server selection alone does not bound a query sent to a frozen server.
 * Measured against FerretDB v1.24 frozen with SIGSTOP: the monitor marks it Unknown after about
 * heartbeat + connect timeout (3 s), from then on operations fail in server selection (2 s); after
 * SIGCONT the next operation succeeds within the 500 ms minimum heartbeat.
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
  const buildInfo = await db.admin().command({ buildInfo: 1 }, { signal: AbortSignal.timeout(STARTUP_TIMEOUT_MS) });
  return {
    client,
    db,
    isFerretDb: 'ferretdbVersion' in buildInfo,
    ping: async () => void (await db.command({ ping: 1 }, { signal: AbortSignal.timeout(PING_TIMEOUT_MS) })),
    close: () => client.close(),
  };
}
