import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.ts';
import { DataDirInUseError, dataDirOwner } from '../db/data-dir-lock.ts';
import { startEmbeddedDatabase } from '../db/embedded.ts';
import { readEmbeddedAddress } from '../db/embedded-address.ts';
import { connectDatabase, type Database } from '../db/mongo.ts';
import type { Cleanup } from './cleanup.ts';
import { CommandFailure } from './failures.ts';

/** A service starting on DATA_DIR publishes its database's address once that is ready: we wait this long. */
const OWNER_WAIT_MS = 15_000;
const OWNER_POLL_MS = 200;

interface Target {
  uri: string;
  /** For messages: which database this is, without credentials. */
  description: string;
}

/** Connection strings may carry a password: messages show everything but the user information. */
export function withoutCredentials(uri: string): string {
  return uri.replace(/^([a-z+]+:\/\/)[^@/]*@/i, '$1***@');
}

/** Starts DATA_DIR's embedded database for this command; undefined when a service claimed DATA_DIR first. */
async function startOwn(directory: string, log: (message: string) => void, cleanup: Cleanup) {
  const starting = startEmbeddedDatabase({ dataDir: directory, log });
  // Registered before it is ready, so an interrupt during the start still stops it.
  cleanup.add('the embedded database', async () => (await starting.catch(() => undefined))?.stop());
  try {
    const embedded = await starting;
    return { uri: embedded.uri, description: `the embedded ${embedded.kind} this command started on ${directory}` };
  } catch (error) {
    if (error instanceof DataDirInUseError) return undefined;
    throw error;
  }
}

/**
 * DATA_DIR's database: the one its running service published, else one started for this command.
 * A service that holds DATA_DIR but has not published yet is starting: wait for it, within a deadline.
 */
async function embeddedTarget(dataDir: string, log: (message: string) => void, cleanup: Cleanup): Promise<Target> {
  const directory = resolve(dataDir);
  const deadline = Date.now() + OWNER_WAIT_MS;
  let waitingFor: number | undefined;
  let startedOwn = false;
  for (;;) {
    const owner = dataDirOwner(directory);
    if (owner && owner.host !== hostname()) {
      throw new CommandFailure(
        `${directory} is in use by process ${owner.pid} on ${owner.host}: run this command there, or set MONGODB_URI`,
      );
    }
    if (owner) {
      const address = readEmbeddedAddress(directory);
      if (address?.pid === owner.pid) {
        return { uri: address.uri, description: `the ${address.kind} of process ${owner.pid} on ${directory}` };
      }
      if (waitingFor !== owner.pid) log(`process ${owner.pid} holds ${directory} and is starting: waiting for it`);
      waitingFor = owner.pid;
    } else {
      if (!startedOwn) log(`no service is running on ${directory}: starting its embedded database for this command`);
      startedOwn = true;
      const own = await startOwn(directory, log, cleanup);
      if (own) return own;
    }
    if (Date.now() >= deadline) {
      throw new CommandFailure(
        `process ${waitingFor ?? '?'} holds ${directory} but published no database address within ` +
          `${OWNER_WAIT_MS / 1000} s (still starting, or a version that does not publish it): try again, or set MONGODB_URI`,
      );
    }
    await sleep(OWNER_POLL_MS);
  }
}

/**
 * The database the `keys` and `documents` commands work on: MONGODB_URI, or DATA_DIR's embedded one.
 * What it opens is closed by `cleanup`.
 */
export async function openCommandDatabase(
  config: Config,
  log: (message: string) => void,
  cleanup: Cleanup,
): Promise<Database> {
  const target: Target = config.MONGODB_URI
    ? { uri: config.MONGODB_URI, description: `MONGODB_URI (${withoutCredentials(config.MONGODB_URI)})` }
    : await embeddedTarget(config.DATA_DIR, log, cleanup);
  let database: Database;
  try {
    database = await connectDatabase(target.uri, config.MONGODB_DB);
  } catch (error) {
    throw new CommandFailure(`cannot reach the database, ${target.description}: ${(error as Error).message}`);
  }
  cleanup.add('the database connection', () => database.close());
  log(`database "${config.MONGODB_DB}" on ${target.description}`);
  return database;
}
