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

type PoolEvent = { address: string; connectionId: number | '<monitor>' };

/**
 * Follows the driver's connection pool events (CMAP), which every MongoClient emits: `counts` hears the
 * connections open and in use after each. Connections are tracked by id, so those made before this
 * was called count from their first use on.
 */
export function followConnectionPool(client: MongoClient, counts: (open: number, inUse: number) => void): void {
  const open = new Set<string>();
  const inUse = new Set<string>();
  const idOf = (event: PoolEvent) => `${event.address}/${event.connectionId}`;
  const on = (
    name: 'connectionCreated' | 'connectionCheckedOut' | 'connectionCheckedIn' | 'connectionClosed',
    change: (id: string) => void,
  ) =>
    client.on(name, (event: PoolEvent) => {
      change(idOf(event));
      counts(open.size, inUse.size);
    });
  on('connectionCreated', (id) => open.add(id));
  on('connectionCheckedOut', (id) => {
    open.add(id);
    inUse.add(id);
  });
  on('connectionCheckedIn', (id) => inUse.delete(id));
  on('connectionClosed', (id) => {
    open.delete(id);
    inUse.delete(id);
  });
}
