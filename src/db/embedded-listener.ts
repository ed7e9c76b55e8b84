import { rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * FerretDB v1 has no authentication: whoever can connect may write an API key. A socket inside
 * DATA_DIR (0700) lets only its owner connect; a loopback port would let every local user.
 */
const SOCKET_FILE = 'ferretdb.sock';
/** A socket's path fits in sun_path: 108 bytes with its NUL on Linux, 104 on macOS. */
const MAX_SOCKET_PATH_BYTES = 103;

export interface EmbeddedListener {
  /** FerretDB's listen flags (tools/ferretdb/main.go). */
  args: string[];
  /** The URI to connect to; undefined: the one FerretDB prints once it listens (a port it chose). */
  uri?: string;
  /** Why the database is less private than it should be, for the operator. */
  warning?: string;
}

/** Where the embedded database of `directory` listens: its socket, or a loopback port if the path is too long. */
export function embeddedListener(directory: string): EmbeddedListener {
  const socket = join(directory, SOCKET_FILE);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH_BYTES) {
    return {
      args: ['--listen', '127.0.0.1:0'],
      warning:
        `${socket} is longer than a Unix socket path may be: the embedded database listens on a loopback ` +
        'port instead, where any user of this machine can connect to it. Use a shorter DATA_DIR.',
    };
  }
  // Left by a server that was killed: the DATA_DIR lock says no other server is using it.
  rmSync(socket, { force: true });
  return { args: ['--listen', '', '--listen-unix', socket], uri: `mongodb://${encodeURIComponent(socket)}/` };
}
