import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type HandedRequests, requestsHandedTo } from './support/pipelined-requests.ts';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import { uniqueDbName, useTestServer } from './support/test-server.ts';

// Issue 36's L1: `Upgrade: h2c` requests, one after another on one keep-alive connection.
const REQUESTS = 50;
const ANSWER_DEADLINE_MS = 5_000;

/** A GET with `Upgrade: h2c`, as `curl --http2 http://` sends it; answered over HTTP/1.1. */
const H2C_GET =
  'GET /favicon.ico HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n' +
  'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n';

/** A keep-alive connection that sends one h2c request at a time, each once the last was answered. */
async function h2cConnection(baseUrl: string) {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise((connected) => socket.once('connect', connected));
  let answers = 0;
  socket.on('data', (chunk: Buffer) => {
    answers += String(chunk).split('HTTP/1.1 301 ').length - 1;
  });
  return {
    socket,
    /** Sends one more and waits for its answer. */
    async next(): Promise<void> {
      const wanted = answers + 1;
      socket.write(H2C_GET);
      const deadline = performance.now() + ANSWER_DEADLINE_MS;
      while (answers < wanted) {
        if (performance.now() > deadline || socket.destroyed) throw new Error(`no answer to h2c request ${wanted}`);
        await new Promise((next) => setTimeout(next, 2));
      }
    },
  };
}

/** Each event's listener count on the server's side of a connection. */
function listenerCounts(socket: Socket): Record<string, number> {
  return Object.fromEntries(socket.eventNames().map((event) => [String(event), socket.listenerCount(event)]));
}

describe('Upgrade: h2c requests on one keep-alive connection', () => {
  const server = useTestServer();

  it(`add no listener to the server's socket over ${REQUESTS} requests, and Node warns of nothing`, async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const handed: HandedRequests = requestsHandedTo(server.http);
    const connection = await h2cConnection(server.baseUrl);
    try {
      await connection.next();
      const serverSide = handed.lastConnection() as Socket;
      const first = listenerCounts(serverSide);
      for (let index = 1; index < REQUESTS; index++) await connection.next();
      expect(handed.lastConnection()).toBe(serverSide);
      expect(listenerCounts(serverSide)).toEqual(first);
      // A warning is emitted on the next tick.
      await new Promise((next) => setImmediate(next));
      expect(warnings.map((warning) => warning.name)).toEqual([]);
    } finally {
      connection.socket.destroy();
      handed.stop();
      process.off('warning', onWarning);
    }
  });

  it('leave no line that is not JSON on the service process output', async () => {
    const service = await startServiceOnRunDatabase({ dbName: uniqueDbName('h2c') });
    try {
      const connection = await h2cConnection(service.origin);
      for (let index = 0; index < REQUESTS; index++) await connection.next();
      connection.socket.destroy();
    } finally {
      expect(await service.stop()).toBe(0);
    }
    expect(service.log.filter((line) => !line.startsWith('{'))).toEqual([]);
  }, 60_000);
});
