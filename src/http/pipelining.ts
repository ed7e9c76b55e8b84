import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How many responses one connection may have waiting behind the one being written (HTTP/1.1
 * pipelining) before it is closed. Browsers do not pipeline and most clients send one request at a
 * time; Node parses every request already received and runs each at once, so without a bound a
 * client that does not read could make the service hold any number of answers for it.
 */
export const MAX_QUEUED_RESPONSES = 16;

/** What becomes of a request whose response must wait for its connection. */
export type QueuedRequest = 'serve' | 'cut' | 'gone';

const QUEUE = Symbol('responses waiting for this connection');

type QueueingSocket = Socket & { [QUEUE]?: ServerResponse[] };

/** Node's own field, which its 'close' of a response sets so that it emits 'close' only once. */
type ClosableResponse = ServerResponse & { _closed: boolean };

/** Still waiting: never given the connection (a response that was has a socket, or has finished and closed). */
const waiting = (res: ServerResponse) => res.socket === null && !res.writableFinished && !res.closed;

/** Ends a response that never got its connection as Node ends one that had it: once, marked destroyed. */
function closeUnsent(res: ServerResponse): void {
  res.destroyed = true;
  (res as ClosableResponse)._closed = true;
  res.emit('close');
}

/**
 * Called for a request whose response waits behind another on its connection (`res.socket` is
 * null when the request arrives); returns 'serve', or 'cut' when this request was one too many
 * and the connection has just been closed, or 'gone' when the connection was closed already
 * (Node still hands over each request it had parsed). A connection's first such request adds
 * one 'close' listener to it: Node destroys the waiting requests when a connection closes, but
 * never emits 'close' on their responses, so whatever waits for that (the access log, the drain,
 * a stream's end) would wait forever. Here they get it, as responses whose client left.
 */
export function queueBehind(socket: Socket, res: ServerResponse): QueuedRequest {
  const connection = socket as QueueingSocket;
  let queue = connection[QUEUE];
  if (queue === undefined) {
    const created: ServerResponse[] = [];
    connection[QUEUE] = queue = created;
    socket.once('close', () => {
      for (const queued of created) if (waiting(queued)) closeUnsent(queued);
    });
  } else {
    // Node gives the connection to waiting responses in order: those at the front that had it are done.
    let done = 0;
    while (done < queue.length && !waiting(queue[done] as ServerResponse)) done++;
    if (done > 0) queue.splice(0, done);
  }
  queue.push(res);
  if (socket.destroyed) return 'gone';
  if (queue.length <= MAX_QUEUED_RESPONSES) return 'serve';
  socket.destroy();
  return 'cut';
}
