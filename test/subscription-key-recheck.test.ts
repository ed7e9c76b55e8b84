import { connect, type Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { sampleIn } from './support/metric-sample.ts';
import { bearer, openStreams, WAIT } from './support/pet-created.ts';
import { type TestServer, useTestServer } from './support/test-server.ts';

const BODY = JSON.stringify({ query: 'subscription { petCreated { cursor pet { id } } }' });
/** Well within the service's whole-request deadline (REQUEST_TIMEOUT_MS), and past a key sync. */
const SYNC_WAIT = { timeout: 10_000, interval: 100 };
/** Ample for a loopback request's headers to be read and checked; far below the request deadline. */
const HEADERS_READ_MS = 300;

const invalidKeyFailures = async (server: TestServer) =>
  sampleIn(await server.metrics.scrape.text(), 'authentication_failures_total', { reason: 'invalid' }) ?? 0;

/** An issued key the service accepts, and its id. */
async function acceptedKey(server: TestServer): Promise<{ key: string; id: string }> {
  const { key, record } = await createApiKeyStore(server.database.db).issue({ name: 'slow-body' });
  await vi.waitFor(async () => {
    expect((await server.request.get(`${server.restBasePath}/pets`).set(bearer(key))).status).toBe(200);
  }, SYNC_WAIT);
  return { key, id: record.id };
}

/** An SSE subscribe by POST whose headers (and key) arrive now and whose body arrives on `finish`. */
function slowSubscribe(server: TestServer, key: string) {
  const { hostname, port } = new URL(server.baseUrl);
  const socket: Socket = connect(Number(port), hostname);
  let answer = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    answer += chunk;
  });
  // A reset shows as a missing answer (answerWith fails), not as an uncaught error.
  socket.on('error', () => {});
  socket.write(
    `POST /graphql HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${key}\r\n` +
      `Accept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n` +
      BODY.slice(0, 10),
  );
  // The service has the headers (and has checked the key) once it has read this far.
  const headersRead = new Promise((read) => setTimeout(read, HEADERS_READ_MS));
  return {
    headersRead,
    finish: () => socket.write(BODY.slice(10)),
    /** The status line, headers and whatever of the body has come once `text` is in it. */
    answerWith: async (text: string) => {
      await vi.waitFor(() => expect(answer).toContain(text), WAIT);
      return answer;
    },
    close: () => socket.destroy(),
  };
}

describe('a key that goes while its subscribe request is still arriving', () => {
  const server = useTestServer();

  it('revoked between the key check (headers) and the stream (body): refused 401 UNAUTHENTICATED, no stream opens', async () => {
    const { key, id } = await acceptedKey(server);
    const request = slowSubscribe(server, key);
    try {
      await request.headersRead;
      await createApiKeyStore(server.database.db).revoke(id);
      // The key sync has run: the key is refused to any new request.
      await vi.waitFor(async () => {
        expect((await server.request.get(`${server.restBasePath}/pets`).set(bearer(key))).status).toBe(401);
      }, SYNC_WAIT);
      const failuresBefore = await invalidKeyFailures(server);
      request.finish();
      const answer = await request.answerWith('UNAUTHENTICATED');
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      expect(answer).toMatch(/\r\nWWW-Authenticate: Bearer realm="petstore", error="invalid_token"\r\n/i);
      expect(await openStreams(server)).toBe(0);
      // Counted with the other 401s of a key that is not (or no longer) valid.
      expect((await invalidKeyFailures(server)) - failuresBefore).toBe(1);
    } finally {
      request.close();
    }
  });

  it('a key still valid after the same wait gets its stream (the wait alone refuses nothing)', async () => {
    const { key } = await acceptedKey(server);
    const other = await acceptedKey(server);
    const request = slowSubscribe(server, key);
    try {
      // As long as above: another key's sync round trip.
      await createApiKeyStore(server.database.db).revoke(other.id);
      await vi.waitFor(async () => {
        expect((await server.request.get(`${server.restBasePath}/pets`).set(bearer(other.key))).status).toBe(401);
      }, SYNC_WAIT);
      request.finish();
      const answer = await request.answerWith('\r\n\r\n');
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toMatch(/\r\nContent-Type: text\/event-stream/i);
      await vi.waitFor(async () => expect(await openStreams(server)).toBe(1), WAIT);
    } finally {
      request.close();
    }
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
  });
});
