import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/config.ts';
import { createHttpServer, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../src/http/server.ts';
import { AUTH, type TestServer, useTestServer } from './support/test-server.ts';

const SMALL_LIMIT = 1024;
const JSON_HEADERS = { ...AUTH, 'Content-Type': 'application/json' };

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
}

/** POST /graphql through node:http: with Content-Length from one string, or chunked from several. */
function postGraphQL(server: TestServer, chunks: string[], headers: Record<string, string> = JSON_HEADERS) {
  const sized = chunks.length === 1 ? { 'Content-Length': String(Buffer.byteLength(chunks[0] ?? '')) } : {};
  return new Promise<Answer>((resolve, reject) => {
    const request = httpRequest(`${server.baseUrl}/graphql`, { method: 'POST', headers: { ...headers, ...sized } });
    request.on('response', (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) });
      });
    });
    // The server may close once it has answered 413; the answer is what matters.
    request.on('error', reject);
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

/** A valid GraphQL request body padded with insignificant whitespace to exactly `bytes` bytes. */
function bodyOfSize(bytes: number): string {
  const json = JSON.stringify({ query: '{ __typename }' });
  return `${json}${' '.repeat(bytes - Buffer.byteLength(json))}`;
}

describe('GraphQL request bodies', () => {
  const server = useTestServer();
  const small = useTestServer({ maxGraphQLBodyBytes: SMALL_LIMIT });

  it(`with the default limit (${DEFAULTS.MAX_GRAPHQL_BODY_BYTES} bytes), then a body of exactly it is served`, async () => {
    const response = await postGraphQL(server, [bodyOfSize(DEFAULTS.MAX_GRAPHQL_BODY_BYTES)]);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ __typename: 'Query' });
  });

  it('with the default limit, then one byte more gets 413 PAYLOAD_TOO_LARGE, shaped as GraphQL', async () => {
    const response = await postGraphQL(server, [bodyOfSize(DEFAULTS.MAX_GRAPHQL_BODY_BYTES + 1)]);
    expect(response.status).toBe(413);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(response.headers.connection).toBe('close');
  });

  it('with a configured limit, then a body over it with Content-Length gets 413', async () => {
    const response = await postGraphQL(small, [bodyOfSize(SMALL_LIMIT + 1)]);
    expect(response.status).toBe(413);
    expect(response.body.errors?.[0]?.message).toContain(`${SMALL_LIMIT} bytes`);
  });

  it('with a configured limit, then a chunked body (no Content-Length) gets 413 once it passes it', async () => {
    const body = bodyOfSize(4 * SMALL_LIMIT);
    const chunks = [body.slice(0, 512), body.slice(512, 1024), body.slice(1024, 2048), body.slice(2048)];
    const response = await postGraphQL(small, chunks, { ...JSON_HEADERS, 'Transfer-Encoding': 'chunked' });
    expect(response.status).toBe(413);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('with a configured limit, then a chunked body within it is served', async () => {
    const body = bodyOfSize(SMALL_LIMIT);
    const response = await postGraphQL(small, [body.slice(0, 100), body.slice(100)], {
      ...JSON_HEADERS,
      'Transfer-Encoding': 'chunked',
    });
    expect(response.status).toBe(200);
  });

  it('when the body is not JSON, then 400 with a plain message (no SyntaxError object)', async () => {
    const response = await postGraphQL(server, ['{"query": "{ __typename }"']);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      {
        message: 'The request body is not valid JSON: send a JSON object with a "query"',
        extensions: { code: 'BAD_REQUEST' },
      },
    ]);
  });

  it('when the JSON is not an object with a query, then Yoga still refuses it in plain words', async () => {
    for (const body of ['[]', '"text"', '{}', '42']) {
      const response = await postGraphQL(server, [body]);
      expect(response.body.data, body).toBeUndefined();
      expect(response.body.errors?.[0]?.message, body).toEqual(expect.any(String));
      expect(JSON.stringify(response.body), body).not.toMatch(/SyntaxError|stack/);
    }
  });
});

/** Opens a raw socket, sends `head` then one `drip` every `everyMs`; resolves when the server closes it. */
function slowSender(port: number, head: string, drip: string, everyMs: number) {
  return new Promise<{ ms: number; received: string }>((resolve) => {
    const started = performance.now();
    let received = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    const timer = setInterval(() => socket.writable && socket.write(drip), everyMs);
    socket.on('data', (data) => {
      received += data.toString('utf8');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ ms: performance.now() - started, received });
    });
  });
}

describe('slow senders', () => {
  const server = useTestServer();
  // The same service and server factory with short deadlines, so the test need not wait 15 s.
  const timeouts = { headersTimeoutMs: 600, requestTimeoutMs: 1_200, checkIntervalMs: 100, keepAliveTimeoutMs: 2_000 };
  let fast: Server;
  let port: number;

  beforeAll(async () => {
    fast = createHttpServer(server.service.listener, timeouts);
    await new Promise<void>((listening) => fast.listen(0, '127.0.0.1', listening));
    port = (fast.address() as { port: number }).port;
  });
  afterAll(async () => {
    fast.closeAllConnections();
    await new Promise<void>((closed) => fast.close(() => closed()));
  });

  it('the production server cuts headers at 15 s and whole requests at 30 s, and keeps idle connections 65 s', () => {
    expect(server.http.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
    expect(server.http.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect([HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS]).toEqual([15_000, 30_000]);
    // Longer than a balancer's own idle timeout (AWS ALB: 60 s), so the balancer closes first.
    expect(server.http.keepAliveTimeout).toBe(65_000);
  });

  it('when a keep-alive connection idles longer than the headers deadline, then its next request is still served', async () => {
    const socket = connect(port, '127.0.0.1');
    const answers: string[] = [];
    socket.on('data', (data) => answers.push(data.toString('utf8')));
    const ask = () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    ask();
    await expect.poll(() => answers.join('')).toMatch(/^HTTP\/1\.1 200 [\s\S]*Keep-Alive: timeout=2/);
    // Idle for more than the 600 ms headers deadline (but less than the keep-alive timeout).
    await new Promise((idle) => setTimeout(idle, 1_200));
    ask();
    await expect.poll(() => answers.join('').match(/HTTP\/1\.1 200 /g)?.length).toBe(2);
    expect(socket.destroyed).toBe(false);
    socket.destroy();
  });

  it('when a client sends its headers a line at a time, then it gets 408 and is cut at the headers deadline', async () => {
    const { ms, received } = await slowSender(port, 'GET /health HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n', 100);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(ms).toBeGreaterThanOrEqual(timeouts.headersTimeoutMs - 50);
    expect(ms).toBeLessThan(timeouts.headersTimeoutMs + 3 * timeouts.checkIntervalMs + 300);
  });

  it('when a client with a valid key sends its body a byte at a time, then it is cut at the request deadline', async () => {
    const head = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.Authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`;
    const { ms, received } = await slowSender(port, head, ' ', 100);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(ms).toBeGreaterThanOrEqual(timeouts.requestTimeoutMs - 50);
    expect(ms).toBeLessThan(timeouts.requestTimeoutMs + 3 * timeouts.checkIntervalMs + 300);
  });
});
