import type { IncomingMessage } from 'node:http';

/** The body passed its limit; the rest of it was left unread. */
export class BodyTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The request body is larger than ${maxBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * The client went away before its body was complete: nobody is left to answer, and nothing of ours
 * failed. The access log says so at info; it is no error of ours to log with a stack.
 */
export class ClientClosedError extends Error {
  constructor(cause?: unknown) {
    super('the client closed the request before sending its whole body', { cause });
    this.name = 'ClientClosedError';
  }
}

/**
 * Reads at most maxBytes, so an oversized or endless body costs us no more than that (a declared
 * Content-Length over the limit is refused before reading). Past the limit we stop listening but do
 * not destroy the socket: that would cut the 413 before it is sent.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  if (Number(req.headers['content-length'] ?? '0') > maxBytes) return Promise.reject(new BodyTooLargeError(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total <= maxBytes) return void chunks.push(chunk);
      cleanup();
      req.pause();
      reject(new BodyTooLargeError(maxBytes));
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    };
    // A request stream fails only when its connection does ("aborted", a reset): the client's doing.
    const onError = (error: Error) => {
      cleanup();
      reject(new ClientClosedError(error));
    };
    // A client that goes away mid-body ends the wait too: every wait has an end.
    const onClose = () => onError(new Error('closed'));
    const cleanup = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
