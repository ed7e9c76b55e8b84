import { lstatSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ownedByMe, PRIVATE_FILE_MODE } from './private-directory.ts';

/** Where DATA_DIR's owner says its embedded database listens: tools such as `npm run keys` connect there. */
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

/**
 * FerretDB v1 has no authentication, so it listens only on a Unix socket in a 0700 directory (DATA_DIR,
 * or one in the temporary directory when that path is too long), never on a port.
 */
const SOCKET_FILE = 'ferretdb.sock';
/** A socket's path fits in sun_path: 108 bytes with its NUL on Linux, 104 on macOS. */
const MAX_SOCKET_PATH_BYTES = 103;
/** Names the directories made for sockets, so a killed process's one is recognised and removed. */
const SOCKET_DIRECTORY_PREFIX = 'petstore-ferretdb-';

export interface EmbeddedListener {
  /** FerretDB's listen flags (tools/ferretdb/main.go). */
  args: string[];
  uri: string;
  /** Removes the directory made for the socket, if one was; safe to call more than once. */
  remove(): void;
}

const fits = (socket: string) => Buffer.byteLength(socket) <= MAX_SOCKET_PATH_BYTES;

function listenOn(socket: string, remove: () => void): EmbeddedListener {
  return { args: ['--listen', '', '--listen-unix', socket], uri: `mongodb://${encodeURIComponent(socket)}/`, remove };
}

/** The socket directory named by a URI this module made, if it is one of ours in the temporary directory. */
function socketDirectoryOf(uri: string): string | undefined {
  const host = /^mongodb:\/\/([^/]+)\/$/.exec(uri)?.[1];
  if (host === undefined) return;
  const socket = decodeURIComponent(host);
  const directory = dirname(socket);
  const ours = basename(socket) === SOCKET_FILE && basename(directory).startsWith(SOCKET_DIRECTORY_PREFIX);
  return ours && dirname(directory) === tmpdir() ? directory : undefined;
}

/** A killed process's socket directory, named by its published address, removed once the lock says it is gone. */
function removeAbandonedSocketDirectory(dataDir: string): void {
  const address = readEmbeddedAddress(dataDir);
  const directory = address && socketDirectoryOf(address.uri);
  if (directory === undefined) return;
  try {
    const stats = lstatSync(directory);
    if (stats.isDirectory() && ownedByMe(stats)) rmSync(directory, { recursive: true, force: true });
  } catch {
    // Gone already (the temporary directory was cleaned).
  }
}

/**
 * Where the embedded database of `dataDir` listens; call only while holding DATA_DIR's lock. Throws
 * when not even the temporary directory gives a short enough socket path.
 */
export function embeddedListener(dataDir: string): EmbeddedListener {
  removeAbandonedSocketDirectory(dataDir);
  const inDataDir = join(dataDir, SOCKET_FILE);
  if (fits(inDataDir)) {
    // Left by a server that was killed: the DATA_DIR lock says no other server is using it.
    rmSync(inDataDir, { force: true });
    return listenOn(inDataDir, () => {});
  }
  // mkdtemp makes it 0700 under a name nobody could have prepared for us.
  const directory = mkdtempSync(join(tmpdir(), SOCKET_DIRECTORY_PREFIX));
  const remove = () => rmSync(directory, { recursive: true, force: true });
  const socket = join(directory, SOCKET_FILE);
  if (!fits(socket)) {
    remove();
    throw new Error(
      `neither ${inDataDir} nor ${socket} is short enough for a Unix socket path: ` +
        'use a shorter DATA_DIR, or set TMPDIR to a shorter directory',
    );
  }
  return listenOn(socket, remove);
}
