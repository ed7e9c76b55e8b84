import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the whole body was in. */
  at: number;
}

/** A Standard Webhooks payload of ours, once verified. */
export interface Payload {
  type: string;
  timestamp: string;
  data: { id: number } & Record<string, unknown>;
  cursor: string;
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
  /** Whether `secret` verifies the request (its raw body and headers), as an integrator's receiver checks it. */
  verifies(request: ReceivedRequest, secret: string): boolean;
  /** Every request's payload, in arrival order; throws if one does not verify with `secret`. */
  payloads(secret: string): Payload[];
  close(): Promise<void>;
}

/** Answers with this status and these headers, and no body. */
export const answerWith =
  (status: number, headers: Record<string, string> = {}): RequestListener =>
  (_request, response) =>
    void response.writeHead(status, headers).end();

function verifies({ body, headers }: ReceivedRequest, secret: string): boolean {
  const signed = { 'webhook-id': '', 'webhook-timestamp': '', 'webhook-signature': '' };
  for (const name in signed) signed[name as keyof typeof signed] = String(headers[name] ?? '');
  try {
    new Webhook(secret).verify(body, signed);
    return true;
  } catch {
    return false;
  }
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
      const { method = '', url: path = '', headers } = request;
      received.push({ method, path, headers, body, at: performance.now() });
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
    verifies,
    payloads: (secret) =>
      received.map((request) => {
        if (!verifies(request, secret)) throw new Error(`a delivery did not verify: ${request.body.slice(0, 200)}`);
        return JSON.parse(request.body) as Payload;
      }),
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
