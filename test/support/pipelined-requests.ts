// HTTP/1.1 pipelining on a raw socket, and the requests a node:http server was handed, for the tests of
// what a hung-up pipeline leaves behind.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { DEFAULT_ASSETS_DIR, readAssetManifest } from '../../src/static/asset-manifest.ts';

/** The largest file the service serves under /assets, by its hashed name: megabytes no client reads. */
export function largestAssetPath(): string {
  const { files } = readAssetManifest(DEFAULT_ASSETS_DIR);
  const [name] = Object.entries(files).sort(([, a], [, b]) => b.identity.bytes - a.identity.bytes)[0] ?? [];
  if (!name) throw new Error('no assets: run npm run build');
  return `/assets/${name}`;
}

/** A GET as a client would pipeline it. */
export const getRequest = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`;

/** What a server was handed: how many requests, and the connection that carried the last one. */
export interface HandedRequests {
  count(): number;
  lastConnection(): Socket | undefined;
  stop(): void;
}

/**
 * Counts the requests `http` is handed (Node's `http.server.request.start` channel: every request
 * it parsed, whatever the listener does with it). `stop()` unsubscribes.
 */
export function requestsHandedTo(http: Server): HandedRequests {
  let count = 0;
  let last: Socket | undefined;
  const onStart = (message: unknown) => {
    const { server, socket } = message as { server: Server; socket: Socket };
    if (server !== http) return;
    count++;
    last = socket;
  };
  subscribe('http.server.request.start', onStart);
  return {
    count: () => count,
    lastConnection: () => last,
    stop: () => unsubscribe('http.server.request.start', onStart),
  };
}

/**
 * Writes `head` and `count` copies of `behind` in one write on a new connection and never reads;
 * hangs up once the server was handed them all or closed the connection itself, and within
 * `deadlineMs` whatever happened. Resolves with whether the server closed it first.
 */
export async function pipelineAndHangUp(
  baseUrl: string,
  pipeline: { head: string; behind: string; count: number },
  handed: HandedRequests,
  deadlineMs: number,
): Promise<{ closedByServer: boolean }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await new Promise((connected) => socket.once('connect', connected));
  const before = handed.count();
  socket.pause();
  socket.write(pipeline.head + pipeline.behind.repeat(pipeline.count));
  const deadline = performance.now() + deadlineMs;
  const closedByServer = () => handed.count() > before && handed.lastConnection()?.destroyed === true;
  while (!closedByServer() && handed.count() - before < 1 + pipeline.count && performance.now() < deadline) {
    await new Promise((next) => setTimeout(next, 5));
  }
  const closed = closedByServer();
  socket.destroy();
  return { closedByServer: closed };
}

/**
 * Writes `count` copies of `request` in one write and reads the answers, as a pipelining client
 * does; resolves with the status line of each answer once `count` arrived, or the server closed
 * the connection, or `deadlineMs` passed. The connection is left open for the caller to look at.
 */
export async function pipelineAndRead(
  baseUrl: string,
  request: string,
  count: number,
  deadlineMs: number,
): Promise<{ statusLines: string[]; socket: Socket }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await new Promise((connected) => socket.once('connect', connected));
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => {
    received += chunk;
  });
  socket.write(request.repeat(count));
  const statusLines = () => received.match(/^HTTP\/1\.1 \d{3}/gm) ?? [];
  const deadline = performance.now() + deadlineMs;
  while (statusLines().length < count && !socket.destroyed && performance.now() < deadline) {
    await new Promise((next) => setTimeout(next, 5));
  }
  return { statusLines: statusLines(), socket };
}
