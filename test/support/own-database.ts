import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedDatabase, startEmbeddedDatabase } from '../../src/db/embedded.ts';
import { freezable } from './freezable.ts';

/** A FerretDB of a test file's own, which the test may freeze, thaw and stop under the service. */
export interface OwnDatabase {
  uri: string;
  pid: number;
  /** SIGSTOP: the process keeps its port and accepts connections but answers nothing. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  /** Thaws if frozen, stops the server (idempotent); the data directory stays until `remove`. */
  stop(): Promise<void>;
  /** Stops and deletes the data directory: for afterAll, whatever state the test left. */
  remove(): Promise<void>;
}

/** The pid of the process whose command line names this data directory (embedded.ts does not say). */
function pidServing(dataDir: string): number {
  const table = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  const pids = table
    .split('\n')
    .filter((line) => line.includes(`--dir ${dataDir}`))
    .map((line) => Number.parseInt(line.trim(), 10));
  if (pids.length !== 1 || !Number.isInteger(pids[0])) {
    throw new Error(`expected one database process on ${dataDir}, found ${pids.length}`);
  }
  return pids[0] as number;
}

export async function startOwnDatabase(): Promise<OwnDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-outage-db-'));
  const database: EmbeddedDatabase = await startEmbeddedDatabase({ dataDir, log: () => {} });
  if (database.kind !== 'ferretdb') throw new Error(`this test needs FerretDB, got ${database.kind}`);
  const pid = pidServing(dataDir);
  let stopped = false;
  const { freeze, thaw } = freezable((name) => {
    if (!stopped) process.kill(pid, name);
  });
  const own: OwnDatabase = {
    uri: database.uri,
    pid,
    freeze,
    thaw,
    async stop() {
      own.thaw();
      if (stopped) return;
      stopped = true;
      await database.stop();
    },
    async remove() {
      await own.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return own;
}
