// The child's embedded database: started on first use, in a temp dir, one Mongo database per
// store, all stopped and the dir removed by close(). FerretDB also exits on its own when its parent
// dies (it runs with --exit-with-stdin), so even a SIGKILL of the child leaves nothing behind.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedDatabase, startEmbeddedDatabase } from '../src/db/embedded.ts';
import { connectDatabase, type Database } from '../src/db/mongo.ts';
import { ensurePetIndexes } from '../src/pets/pet-repository.ts';
import type { DatabaseInfo } from './protocol.ts';

export interface Databases {
  /** Connects to database `name`, starting the embedded server first if need be. */
  open(name: string): Promise<Database>;
  /** What the figures came from, once a database was opened. */
  info(): DatabaseInfo | undefined;
  close(): Promise<void>;
}

export function createDatabases(log: (message: string) => void, onDeath: () => void): Databases {
  let dataDir: string | undefined;
  let embedded: EmbeddedDatabase | undefined;
  const open: Database[] = [];
  return {
    async open(name) {
      dataDir ??= mkdtempSync(join(tmpdir(), 'petstore-bench-db-'));
      if (!embedded) {
        embedded = await startEmbeddedDatabase({ dataDir, log });
        embedded.onUnexpectedExit((code) => {
          log(`the embedded database exited (code ${code}); stopping`);
          onDeath();
        });
      }
      const database = await connectDatabase(embedded.uri, name);
      open.push(database);
      await ensurePetIndexes(database.db);
      return database;
    },
    info() {
      if (!embedded) return undefined;
      // tools/ferretdb/main.go always runs FerretDB v1 with its SQLite backend.
      const name =
        embedded.kind === 'ferretdb' ? 'FerretDB v1 (SQLite backend)' : `${embedded.kind} (FerretDB could not start)`;
      return { kind: embedded.kind, label: `${name}, embedded, on loopback`, uri: embedded.uri };
    },
    async close() {
      for (const database of open) await database.close().catch(() => {});
      await embedded?.stop().catch(() => {});
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
