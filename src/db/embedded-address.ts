import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE } from './private-directory.ts';

/**
 * Where the owner of DATA_DIR says its embedded database listens. The lock stops a second server over
 * the same files, so tools such as `npm run keys` connect to the running one through this address.
 */
const ADDRESS_FILE = '.embedded.json';

export interface EmbeddedAddress {
  /** The process that started the database: the same pid as in DATA_DIR/.lock while it is valid. */
  pid: number;
  /** The server's kind, for messages: read as any text, since older versions also ran mongod. */
  kind: string;
  uri: string;
}

/** Writes the address whole (a reader never sees half a file); returns the function that removes it. */
export function publishEmbeddedAddress(directory: string, address: EmbeddedAddress): () => void {
  const file = join(directory, ADDRESS_FILE);
  const partial = `${file}.${address.pid}`;
  // 0600: the address is the way in to a database without authentication.
  writeFileSync(partial, `${JSON.stringify(address)}\n`, { mode: PRIVATE_FILE_MODE });
  renameSync(partial, file);
  return () => {
    // A later owner may have published its own address over ours: that one stays.
    if (readEmbeddedAddress(directory)?.pid === address.pid) rmSync(file, { force: true });
  };
}

/** The published address, or undefined when there is none (or a torn or foreign file). */
export function readEmbeddedAddress(directory: string): EmbeddedAddress | undefined {
  try {
    const value = JSON.parse(readFileSync(join(directory, ADDRESS_FILE), 'utf8')) as Partial<EmbeddedAddress>;
    if (typeof value.pid !== 'number' || typeof value.uri !== 'string' || typeof value.kind !== 'string') return;
    return { pid: value.pid, kind: value.kind, uri: value.uri };
  } catch {
    return undefined;
  }
}
