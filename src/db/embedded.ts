import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StartRefusedError } from '../start-refusal.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { type EmbeddedListener, embeddedListener, publishEmbeddedAddress } from './embedded-address.ts';
import { buildFerretDb, type EmbeddedProcess, ferretDbBinaryPath, startFerretDb } from './ferretdb.ts';
import { makePrivateDirectory, type NotOwnedEntry, PRIVATE_FILE_MODE } from './private-directory.ts';

/** A MongoDB-compatible server this process started and must stop. */
export interface EmbeddedDatabase extends EmbeddedProcess {
  /** The one embedded server (older versions also ran mongod: see BACKEND_MARKER). */
  kind: typeof KIND;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** Progress lines for people watching a first build. */
  log: (message: string) => void;
  /** What the operator should look at (DATA_DIR's modes); `log` when not given. */
  warn?: (message: string) => void;
}

/**
 * Which server wrote DATA_DIR. Older versions fell back to mongod or mongodb-memory-server: FerretDB
 * over their data would look like every pet vanished, and they must not start over FerretDB's.
 */
const BACKEND_MARKER = '.backend';
const KIND = 'ferretdb';

/** Said in one line (main.ts prints it as the start's refusal), with the way around it. */
export class NoEmbeddedDatabaseError extends StartRefusedError {
  constructor(reason: string) {
    super(
      `no embedded database could be started here: ${reason}. To use another MongoDB-compatible ` +
        'server, set MONGODB_URI (e.g. MONGODB_URI=mongodb://127.0.0.1:27017 npm start)',
    );
    this.name = 'NoEmbeddedDatabaseError';
  }
}

/** Where the server will listen, or NoEmbeddedDatabaseError when no socket path is short enough. */
function listenerOf(directory: string): EmbeddedListener {
  try {
    return embeddedListener(directory);
  } catch (error) {
    throw new NoEmbeddedDatabaseError(`${KIND}: ${(error as Error).message}`);
  }
}

const describeNotOwned = ({ path, uid, mode }: NotOwnedEntry) => `${path} (owner uid ${uid}, mode ${mode.toString(8)})`;

/**
 * FerretDB (built once, which needs Go), or NoEmbeddedDatabaseError saying why not. Once ready, its
 * URI is published in DATA_DIR (embedded-address.ts) for tools run beside the service.
 */
export async function startEmbeddedDatabase({ dataDir, log, warn = log }: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const directory = resolve(dataDir);
  const { tightened, notOwned } = makePrivateDirectory(directory);
  if (tightened.length > 0) {
    warn(`${directory} was open to other users of this machine: made ${tightened.length} entries private (0700/0600)`);
  }
  if (notOwned.length > 0) {
    // Whoever can read DATA_DIR reads every key digest; whoever can write it can plant files the server opens.
    throw new NoEmbeddedDatabaseError(
      `other users of this machine can read or write ${notOwned.map(describeNotOwned).join(', ')}, which ` +
        `this user (uid ${process.getuid?.()}) does not own and cannot make private: ` +
        'its owner must chmod go-rwx it (or chown it to this user), or use another DATA_DIR',
    );
  }
  // One owner per data directory: a second server over the same files would corrupt them.
  const unlock = lockDataDir(directory);
  let unpublish = () => {};
  let removeListener = () => {};
  // However this process ends (even interrupted while starting), the directory is free for the next owner.
  const release = () => {
    process.off('exit', release);
    unpublish();
    removeListener();
    unlock();
  };
  process.once('exit', release);
  try {
    const listener = listenerOf(directory);
    removeListener = listener.remove;
    const database = await startOwnFerretDb(directory, listener, log);
    try {
      unpublish = publishEmbeddedAddress(directory, { pid: process.pid, kind: database.kind, uri: database.uri });
    } catch (error) {
      await database.stop();
      throw error;
    }
    return {
      ...database,
      // Unpublished first: nobody is sent to a database that is going away.
      stop: () => {
        unpublish();
        return database.stop().finally(release);
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

async function startOwnFerretDb(
  directory: string,
  listener: EmbeddedListener,
  log: EmbeddedOptions['log'],
): Promise<EmbeddedDatabase> {
  const markerFile = join(directory, BACKEND_MARKER);
  const marker = existsSync(markerFile) ? readFileSync(markerFile, 'utf8').trim() : KIND;
  if (marker !== KIND) {
    throw new NoEmbeddedDatabaseError(`${directory} holds ${marker} data; not starting ${KIND} over it`);
  }
  if (!existsSync(ferretDbBinaryPath()) && spawnSync('go', ['version'], { stdio: 'ignore' }).status !== 0) {
    throw new NoEmbeddedDatabaseError('Go is not installed, so FerretDB cannot be built (install Go)');
  }
  // Claimed before the server writes a file, so nothing else starts over a half-made directory.
  writeFileSync(markerFile, `${KIND}\n`, { mode: PRIVATE_FILE_MODE });
  try {
    return { ...(await startFerretDb(await buildFerretDb(log), directory, listener)), kind: KIND };
  } catch (error) {
    throw new NoEmbeddedDatabaseError(`${KIND}: ${(error as Error).message}`);
  }
}
