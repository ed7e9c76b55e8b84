import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { StartRefusedError } from '../start-refusal.ts';
import { PRIVATE_FILE_MODE } from './private-directory.ts';

const LOCK_FILE = '.lock';
/** A takeover that takes longer than this was abandoned by a process that died in the middle. */
const TAKEOVER_STALE_MS = 10_000;

export interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
}

export class DataDirInUseError extends StartRefusedError {
  constructor(directory: string, owner: LockOwner = { pid: 0, host: '?', startedAt: '?' }) {
    super(
      `${directory} is in use by process ${owner.pid} on ${owner.host} (since ${owner.startedAt}). ` +
        'Two servers over the same files would corrupt them: stop that one first, or give this one another DATA_DIR.',
    );
    this.name = 'DataDirInUseError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else; only ESRCH means it is gone.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(file: string): LockOwner | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

/** Creates `file` only if it does not exist (O_EXCL): the one atomic step every claim rests on. */
function createExclusive(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  writeSync(fd, content);
  closeSync(fd);
  return true;
}

/** A lock whose owner is gone, or that is unreadable for longer than a write can take. */
function isStale(file: string, owner: LockOwner | undefined): boolean {
  if (!owner) return Date.now() - statSync(file).mtimeMs > TAKEOVER_STALE_MS;
  return owner.host === hostname() && !isAlive(owner.pid);
}

/** Who holds DATA_DIR now; undefined when nobody does (no lock, or one left by a process that is gone). */
export function dataDirOwner(directory: string): LockOwner | undefined {
  const file = join(directory, LOCK_FILE);
  const owner = readOwner(file);
  return owner && !isStale(file, owner) ? owner : undefined;
}

/**
 * Claims DATA_DIR for this process, so a second service or embedded database over the same files
 * refuses to start. A lock left by a killed process is taken over; racing takeovers are serialised
 * by a second exclusive file, so exactly one of them wins. Returns the release function.
 */
export function lockDataDir(directory: string): () => void {
  const file = join(directory, LOCK_FILE);
  const takeover = `${file}.takeover`;
  const me: LockOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  const content = `${JSON.stringify(me)}\n`;
  const release = () => {
    if (readOwner(file)?.pid === me.pid) rmSync(file, { force: true });
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createExclusive(file, content)) return release;
    const owner = readOwner(file);
    if (!isStale(file, owner)) throw new DataDirInUseError(directory, owner);
    if (!createExclusive(takeover, content)) {
      try {
        if (Date.now() - statSync(takeover).mtimeMs > TAKEOVER_STALE_MS) rmSync(takeover, { force: true });
      } catch {
        // Gone already: the other taker finished.
      }
      continue;
    }
    try {
      // Under the takeover claim nobody else replaces the lock: check again, then replace it whole.
      if (isStale(file, readOwner(file))) {
        const mine = `${file}.${process.pid}`;
        createExclusive(mine, content);
        renameSync(mine, file);
        return release;
      }
    } finally {
      rmSync(takeover, { force: true });
    }
  }
  throw new DataDirInUseError(directory, readOwner(file));
}
