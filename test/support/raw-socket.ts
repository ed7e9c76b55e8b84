import { connect, type Socket } from 'node:net';

function connectTo(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * A client that announces a body, sends part of it and hangs up: what a dropped mobile connection or
 * an impatient script does. Resolves once the socket is closed.
 */
export async function abortMidBody(
  baseUrl: string,
  request: { method?: string; path: string; headers: Record<string, string>; body: string },
): Promise<void> {
  const socket = await connectTo(baseUrl);
  const head = [`${request.method ?? 'POST'} ${request.path} HTTP/1.1`, `Host: ${new URL(baseUrl).host}`];
  for (const [name, value] of Object.entries(request.headers)) head.push(`${name}: ${value}`);
  head.push(`Content-Length: ${Buffer.byteLength(request.body) * 2}`);
  socket.write(`${head.join('\r\n')}\r\n\r\n${request.body}`);
  // Long enough for the server to start reading the body, so the abort lands mid-body.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise<void>((closed) => {
    socket.once('close', () => closed());
    socket.destroy();
  });
}

export interface RawExchange {
  /** Everything the server wrote before it closed, or before the deadline. */
  answer: Buffer;
  /** True when the server neither answered completely nor closed within the deadline. */
  stalled: boolean;
}

/**
 * Writes bytes as they are (no HTTP client in between to correct them) and half-closes, then reads
 * until the server closes or `deadlineMs` passes.
 */
export async function exchangeRaw(baseUrl: string, bytes: Buffer | string, deadlineMs: number): Promise<RawExchange> {
  const socket = await connectTo(baseUrl);
  const parts: Buffer[] = [];
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(true), deadlineMs);
    function finish(stalled: boolean) {
      clearTimeout(timer);
      socket.destroy();
      resolve({ answer: Buffer.concat(parts), stalled });
    }
    socket.on('data', (part: Buffer) => parts.push(part));
    socket.once('close', () => finish(false));
    socket.once('error', () => finish(false));
    socket.end(bytes);
  });
}
