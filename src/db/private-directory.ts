import { chmodSync, lstatSync, mkdirSync, readdirSync, type Stats, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The embedded database has no authentication: whoever can read DATA_DIR can read every pet and key
 * digest, and whoever learns its address can write an API key. Only its owner may enter it.
 */
export const PRIVATE_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** For the database server this process starts: what it creates is its owner's alone. */
export const PRIVATE_UMASK = 0o077;

const OTHERS = 0o077;
/** Whether this process's user owns what `stats` describes (always, where there are no uids). */
export const ownedByMe = (stats: Stats) => process.getuid === undefined || stats.uid === process.getuid();

/** Something other users can read or write that this user cannot make private: it is not ours. */
export interface NotOwnedEntry {
  path: string;
  uid: number;
  mode: number;
}

/**
 * Creates `directory` 0700, or tightens an existing one and the files directly in it (older versions
 * left 0755 and 0644) when this user owns them. Returns what it tightened, for a warning, and what
 * it could not make private, which the caller refuses.
 */
export function makePrivateDirectory(directory: string): { tightened: string[]; notOwned: NotOwnedEntry[] } {
  mkdirSync(directory, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  const tightened: string[] = [];
  const notOwned: NotOwnedEntry[] = [];
  const tighten = (path: string, stats: Stats, mode: number) => {
    if ((stats.mode & OTHERS) === 0) return;
    if (!ownedByMe(stats)) {
      notOwned.push({ path, uid: stats.uid, mode: stats.mode & 0o777 });
      return;
    }
    chmodSync(path, mode);
    tightened.push(path);
  };
  // The directory's own mode: a DATA_DIR that is a symbolic link (always 0777) means the directory it names.
  tighten(directory, statSync(directory), PRIVATE_DIRECTORY_MODE);
  // Others could still swap what is inside between our look and our chmod: touch nothing in there.
  if (notOwned.length > 0) return { tightened, notOwned };
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    // lstat, and symbolic links left alone: chmod would follow one out of the directory. Now that the
    // directory is ours and 0700, nobody else can replace an entry between the lstat and the chmod.
    if (entry.isFile()) tighten(path, lstatSync(path), PRIVATE_FILE_MODE);
    else if (entry.isDirectory()) tighten(path, lstatSync(path), PRIVATE_DIRECTORY_MODE);
  }
  return { tightened, notOwned };
}
