import { type Db, MongoClient } from 'mongodb';

export interface Database {
  client: MongoClient;
  db: Db;
  /** FerretDB runs findAndModify without a transaction; callers that count on its atomicity need to know. */
  isFerretDb: boolean;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects with timeouts suited to a request-serving process: the driver's 30 s server selection
 * would hold every request that long when the database is down; a few seconds then 503 is kinder.
 */
export async function connectDatabase(uri: string, dbName: string): Promise<Database> {
  const client = new MongoClient(uri, {
    appName: 'petstore-gateway',
    serverSelectionTimeoutMS: 5_000,
    connectTimeoutMS: 5_000,
  });
  await client.connect();
  const db = client.db(dbName);
  const buildInfo = await db.admin().command({ buildInfo: 1 });
  return {
    client,
    db,
    isFerretDb: 'ferretdbVersion' in buildInfo,
    ping: async () => void (await db.command({ ping: 1 })),
    close: () => client.close(),
  };
}
