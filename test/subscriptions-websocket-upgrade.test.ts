import { request as httpRequest } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { capturingLogger } from './support/capturing-logger.ts';
import { API_KEY, useTestServer } from './support/test-server.ts';
import { upgradeStatus } from './support/websocket.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with `Upgrade: h2c`, as `curl --http2 http://` and Java's HttpClient send it. */
function h2cRequest(baseUrl: string, path: string, body?: string): Promise<Answer> {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${API_KEY}`,
    Connection: 'Upgrade, HTTP2-Settings',
    Upgrade: 'h2c',
    'HTTP2-Settings': 'AAMAAABkAARAAAAAAAIAAAAA',
    ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
  };
  return new Promise((answered, failed) => {
    const req = httpRequest(`${baseUrl}${path}`, { method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => answered({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', failed);
    req.setTimeout(5_000, () => req.destroy(new Error('no answer within 5 s')));
    req.end(body);
  });
}

describe('requests that ask for another protocol than WebSocket', () => {
  const { logger, lines } = capturingLogger();
  const server = useTestServer({ logger });

  it('GET /v1/pets with Upgrade: h2c is answered over HTTP/1.1 as without it, with its request id and access-log line', async () => {
    const answer = await h2cRequest(server.baseUrl, `${server.restBasePath}/pets`);
    expect(answer.status).toBe(200);
    expect(Array.isArray(JSON.parse(answer.body))).toBe(true);
    const requestId = answer.headers['x-request-id'];
    expect(requestId).toBeTruthy();
    await vi.waitFor(() =>
      expect(lines.find((line) => line.reqId === requestId)).toMatchObject({
        status: 200,
      }),
    );
  });

  it('a POST /graphql with a body and Upgrade: h2c runs, its body read whole', async () => {
    const answer = await h2cRequest(server.baseUrl, '/graphql', JSON.stringify({ query: '{ __typename }' }));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ data: { __typename: 'Query' } });
  });

  it('a refused WebSocket upgrade gets its access-log line', async () => {
    const from = lines.length;
    expect(await upgradeStatus(`${server.baseUrl}/v1`)).toBe(404);
    await vi.waitFor(() => expect(lines.slice(from).some((line) => line.status === 404)).toBe(true));
  });
});
