import type { WebSocket } from 'ws';

/** A peer gets this long to answer the server's close frame before its socket is cut. */
export const CLOSE_GRACE_MS = 1_000;

/**
 * graphql-ws's close codes we send, as its `CloseCode` numbers them: named here so that what runs
 * before the first upgrade does not load graphql-ws (it is loaded with ws on that upgrade).
 */
export const CloseCode = {
  Unauthorized: 4401,
  ConnectionInitialisationTimeout: 4408,
  TooManyInitialisationRequests: 4429,
  InternalServerError: 4500,
} as const;

/** Why an upgrade was refused (websocket_upgrades_refused_total): 429 for an address's share, 503 for the instance. */
export type UpgradeRefusalReason =
  | 'address_pending'
  | 'address_rate'
  | 'instance_pending'
  | 'instance_sockets'
  | 'shutdown';

type Release = (code: number, reason: string) => void;

interface Ending {
  releases: Release[];
  released: boolean;
  cutting: boolean;
}

/** What each socket holds (its streams, its counts), released once: see onSocketEnd. */
const endings = new WeakMap<WebSocket, Ending>();

function release(ending: Ending, code: number, reason: string): void {
  if (ending.released) return;
  ending.released = true;
  for (const each of ending.releases) each(code, reason);
}

function endingOf(socket: WebSocket): Ending {
  let ending = endings.get(socket);
  if (!ending) {
    const created: Ending = { releases: [], released: false, cutting: false };
    socket.once('close', (code, reason) => release(created, code, String(reason)));
    endings.set(socket, created);
    ending = created;
  }
  return ending;
}

/**
 * Runs `onEnd` once when the socket ends: when the server sends its close frame (endSocket), or at
 * its 'close' event (the peer closed, or the connection dropped), whichever comes first.
 */
export function onSocketEnd(socket: WebSocket, onEnd: Release): void {
  endingOf(socket).releases.push(onEnd);
}

/**
 * The server closes the socket: the close frame goes out and what the socket held is released at
 * once, without waiting for the peer's answer (ws waits 30 s for it); a peer that has not answered
 * within `graceMs` is cut. A `graceMs` of 0 cuts it as soon as the frame is written.
 */
export function endSocket(socket: WebSocket, code: number, reason: string, graceMs = CLOSE_GRACE_MS): void {
  if (socket.readyState === socket.CLOSED) return;
  // A close reason is at most 123 bytes (RFC 6455 §5.5): a longer one is cut at a character's end.
  const bytes = Buffer.from(reason).subarray(0, 123);
  if (socket.readyState === socket.OPEN) socket.close(code, bytes.toString().replace(/\uFFFD$/, ''));
  const ending = endingOf(socket);
  release(ending, code, reason);
  if (graceMs === 0) return void socket.terminate();
  if (ending.cutting) return;
  ending.cutting = true;
  // Unref'd: a stopping process waits for its sockets, never for this timer.
  setTimeout(() => socket.terminate(), graceMs).unref();
}
