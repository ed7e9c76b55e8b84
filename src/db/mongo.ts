import { MongoClient, type Db } from 'mongodb';
import { ensurePetIndexes } from '../pets/pet-repository.ts';

export interface Database {
  client: MongoClient;
  db: Db;
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
  await db.command({ ping: 1 });
  await ensurePetIndexes(db);
  return { client, db, close: () => client.close() };
}
