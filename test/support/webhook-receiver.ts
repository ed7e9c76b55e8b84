import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback that counts what reaches it, down to the TCP connection. */
export interface Receiver {
  url: string;
  port: number;
  /** TCP connections accepted: zero proves a refusal came before any socket opened. */
  connections(): number;
  /** Requests whose body was read in full, in order. */
  received: ReceivedRequest[];
  /** Resolves when every connection accepted so far is closed; rejects after `ms`. */
  allClosed(ms?: number): Promise<void>;
  close(): Promise<void>;
}

const answerOk: RequestListener = (_request, response) => response.end('ok');

/** Each request is recorded once its body is read, then `handler` answers it (by default 200). */
export async function startReceiver(handler: RequestListener = answerOk): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const sockets: Socket[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      handler(request, response);
    });
  });
  server.on('connection', (socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    connections: () => sockets.length,
    received,
    allClosed: (ms = 1_000) => allClosed(sockets, ms),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function allClosed(sockets: Socket[], ms: number): Promise<void> {
  const closes = sockets.map((socket) =>
    socket.destroyed ? Promise.resolve() : new Promise<void>((resolve) => socket.once('close', () => resolve())),
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`a receiver's connection still open after ${ms} ms`)), ms);
  });
  return Promise.race([Promise.all(closes).then(() => undefined), late]).finally(() => clearTimeout(timer));
}
