import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ANSWERED, LEFT } from '../src/edge/access-log.ts';
import { MAX_QUEUED_RESPONSES } from '../src/http/pipelining.ts';
import { createLogger } from '../src/logger.ts';
import { heapUsedAfterCollection } from './support/heap.ts';
import {
  getRequest,
  type HandedRequests,
  largestAssetPath,
  pipelineAndHangUp,
  pipelineAndRead,
  requestsHandedTo,
} from './support/pipelined-requests.ts';
import { API_KEY, startTestServer, type TestServer } from './support/test-server.ts';

// Issue 36's H1: 20 connections, each 1,000 requests pipelined behind an answer it never reads, then a hang-up.
const CONNECTIONS = 20;
const PIPELINED = 1_000;
const HEAP_GROWTH_LIMIT_MB = 20;
const CONNECTION_DEADLINE_MS = 10_000;
const LOG_DEADLINE = { timeout: 15_000, interval: 100 };
const MB = 1024 * 1024;

const SSE_BODY = JSON.stringify({ query: 'subscription { petCreated { cursor pet { id name } } }' });
/** A petCreated stream over SSE with a key: an answer that never finishes by itself. */
const SSE_HEAD =
  `POST /graphql HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${API_KEY}\r\nAccept: text/event-stream\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(SSE_BODY)}\r\n\r\n${SSE_BODY}`;

interface AccessLines {
  lines: number;
  requestIds: number;
  tooManyPipelined: number;
}

/** The service's own logger (batched lines, as in production) into a file, read when counting. */
function serviceLog() {
  const dir = mkdtempSync(join(tmpdir(), 'pipelined-hangups-'));
  const path = join(dir, 'service.log');
  const logger = createLogger('info', path);
  const read = (): AccessLines => {
    const entries = readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; reqId?: string });
    const access = entries.filter((entry) => entry.msg === ANSWERED || entry.msg === LEFT);
    return {
      lines: access.length,
      requestIds: new Set(access.map((entry) => entry.reqId)).size,
      tooManyPipelined: entries.filter((entry) => entry.msg.startsWith('too many pipelined requests')).length,
    };
  };
  return { logger, read, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('connections that pipeline requests behind an answer they never read, then hang up', () => {
  const log = serviceLog();
  let server: TestServer;
  let handed: HandedRequests;

  beforeAll(async () => {
    server = await startTestServer({ logger: log.logger });
    handed = requestsHandedTo(server.http);
  });
  afterAll(async () => {
    handed?.stop();
    await server?.close();
    log.remove();
  });

  /** `connections` such connections one after another; how many requests the service was handed. */
  async function hangUps(head: string, connections: number): Promise<{ handed: number; closedByServer: number }> {
    const before = handed.count();
    let closedByServer = 0;
    for (let index = 0; index < connections; index++) {
      const pipeline = { head, behind: getRequest('/favicon.ico'), count: PIPELINED };
      const outcome = await pipelineAndHangUp(server.baseUrl, pipeline, handed, CONNECTION_DEADLINE_MS);
      if (outcome.closedByServer) closedByServer++;
    }
    return { handed: handed.count() - before, closedByServer };
  }

  /** Every request the service was handed has its one access-log line. */
  async function expectEveryRequestLogged(): Promise<AccessLines> {
    await vi.waitFor(() => expect(log.read().lines).toBe(handed.count()), LOG_DEADLINE);
    const lines = log.read();
    expect(lines.requestIds).toBe(lines.lines);
    return lines;
  }

  /** The heap growth over `connections` hang-ups behind `head`, after a warm-up of one. */
  async function heapGrowthMb(head: string): Promise<number> {
    await hangUps(head, 1);
    await expectEveryRequestLogged();
    const before = await heapUsedAfterCollection();
    const cutBefore = log.read().tooManyPipelined;
    const { handed: count, closedByServer } = await hangUps(head, CONNECTIONS);
    const { tooManyPipelined } = await expectEveryRequestLogged();
    const growth = ((await heapUsedAfterCollection()) - before) / MB;
    // Each connection was handed its first request and more than the bound allows behind it, and cut.
    expect(count).toBeGreaterThan(CONNECTIONS * (MAX_QUEUED_RESPONSES + 1));
    expect({ closedByServer, logged: tooManyPipelined - cutBefore }).toEqual({
      closedByServer: CONNECTIONS,
      logged: CONNECTIONS,
    });
    return growth;
  }

  it(`a client that pipelines ${MAX_QUEUED_RESPONSES + 1} requests and reads is answered each, its connection kept`, async () => {
    const count = MAX_QUEUED_RESPONSES + 1;
    const { statusLines, socket } = await pipelineAndRead(server.baseUrl, getRequest('/favicon.ico'), count, 5_000);
    try {
      expect(statusLines).toEqual(Array(count).fill('HTTP/1.1 301'));
      expect(handed.lastConnection()?.destroyed).toBe(false);
    } finally {
      socket.destroy();
    }
    await expectEveryRequestLogged();
  });

  it('behind a large public asset, with no key: the heap stays put and every request has its access line', async () => {
    expect(await heapGrowthMb(getRequest(largestAssetPath()))).toBeLessThan(HEAP_GROWTH_LIMIT_MB);
  }, 120_000);

  it('behind a petCreated stream over SSE, with a key: the same', async () => {
    expect(await heapGrowthMb(SSE_HEAD)).toBeLessThan(HEAP_GROWTH_LIMIT_MB);
  }, 120_000);

  it('a large asset whose client hangs up leaves no file open', async () => {
    const openFiles = () => readdirSync('/proc/self/fd').length;
    await hangUps(getRequest(largestAssetPath()), 1);
    await expectEveryRequestLogged();
    const before = openFiles();
    await hangUps(getRequest(largestAssetPath()), 10);
    await expectEveryRequestLogged();
    // Node closes a connection's socket at once; the asset's file is closed with its response.
    await vi.waitFor(() => expect(openFiles()).toBeLessThanOrEqual(before), LOG_DEADLINE);
  }, 60_000);
});
