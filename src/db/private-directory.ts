import { chmodSync, lstatSync, mkdirSync, readdirSync, type Stats } from 'node:fs';
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
const ownedByMe = (stats: Stats) => process.getuid === undefined || stats.uid === process.getuid();

/**
 * Creates `directory` 0700, or tightens an existing one and the files directly in it (older versions
 * left 0755 and 0644) when this user owns them. Returns what it could not make private, for a warning.
 */
export function makePrivateDirectory(directory: string): { tightened: string[]; notOwned: string[] } {
  mkdirSync(directory, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  const tightened: string[] = [];
  const notOwned: string[] = [];
  const tighten = (path: string, stats: Stats, mode: number) => {
    if ((stats.mode & OTHERS) === 0) return;
    if (!ownedByMe(stats)) {
      notOwned.push(path);
      return;
    }
    chmodSync(path, mode);
    tightened.push(path);
  };
  tighten(directory, lstatSync(directory), PRIVATE_DIRECTORY_MODE);
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    // Symbolic links are left alone: chmod would follow them out of the directory.
    if (entry.isFile()) tighten(path, lstatSync(path), PRIVATE_FILE_MODE);
    else if (entry.isDirectory()) tighten(path, lstatSync(path), PRIVATE_DIRECTORY_MODE);
  }
  return { tightened, notOwned };
}
