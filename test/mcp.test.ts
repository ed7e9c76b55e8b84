// Agents as clients: the official MCP SDK's Client over Streamable HTTP against the real service, in
// the 2025 revision today's clients speak and in 2026-07-28, under the API keys and their scopes.
import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Client, type ClientOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../src/auth/scopes.ts';
import { capturingLogger, type LogLine } from './support/capturing-logger.ts';
import { sampleIn } from './support/metric-sample.ts';
import { expectDelivered, issueKey, PET_CREATED } from './support/pet-created.ts';
import { subscribeSse } from './support/sse.ts';
import { API_KEY, startTestServer, type TestServer } from './support/test-server.ts';

const REVISIONS: { revision: string; options: ClientOptions }[] = [
  { revision: '2025-11-25', options: {} },
  { revision: '2025-06-18', options: { supportedProtocolVersions: ['2025-06-18'] } },
  { revision: '2026-07-28', options: { versionNegotiation: { mode: { pin: '2026-07-28' } } } },
];

let server: TestServer;
let log: LogLine[];
const keys = {} as Record<'read' | 'write', string>;

beforeAll(async () => {
  const captured = capturingLogger();
  log = captured.lines;
  server = await startTestServer({ logger: captured.logger });
  keys.read = await issueKey(server, ['pets:read'] satisfies Scope[]);
  keys.write = await issueKey(server, ['pets:read', 'pets:write'] satisfies Scope[]);
}, 30_000);
afterAll(() => server?.close());

const mcpUrl = (on: TestServer = server) => new URL(`${on.baseUrl}/mcp`);

async function connected(key: string, options: ClientOptions, on: TestServer = server): Promise<Client> {
  const client = new Client({ name: 'petstore-test-agent', version: '1.0.0' }, options);
  const requestInit = { headers: { Authorization: `Bearer ${key}` } };
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(on), { requestInit }));
  return client;
}

/** What a raw MCP request of the 2025 revision sends beside its body. */
const rawHeaders = (key: string, more: Record<string, string> = {}) => ({
  Authorization: `Bearer ${key}`,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'Mcp-Protocol-Version': '2025-11-25',
  ...more,
});

/** The pets GET /v1/pets lists with this limit, page after page. */
async function restPages(limit: number): Promise<number[][]> {
  const pages: number[][] = [];
  let path: string | undefined = `${server.restBasePath}/pets?limit=${limit}`;
  while (path) {
    const response: { body: { id: number }[]; headers: Record<string, string | undefined> } = await server.request
      .get(path)
      .set({ Authorization: `Bearer ${API_KEY}` });
    pages.push(response.body.map((pet) => pet.id));
    const link = response.headers.link;
    path = link === undefined ? undefined : /<([^>]+)>; rel="next"/.exec(link)?.[1];
  }
  return pages;
}

describe.each(REVISIONS)('MCP at /mcp, protocol revision $revision', ({ revision, options }) => {
  it('when a pets:read key connects, then it is told only of list_pets, a tool that only reads', async () => {
    const client = await connected(keys.read, options);
    expect(client.getNegotiatedProtocolVersion()).toBe(revision);
    // No tools/list_changed: nothing for a client to hold a stream open for.
    expect(client.getServerCapabilities()?.tools?.listChanged).toBeFalsy();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint])).toEqual([['list_pets', true]]);
    await client.close();
  });

  it('when a pets:read pets:write key connects, then it has list_pets and create_pet, their schemas from the OpenAPI document', async () => {
    const client = await connected(keys.write, options);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['list_pets', 'create_pet']);
    const create = tools.find((tool) => tool.name === 'create_pet');
    expect(create?.annotations?.readOnlyHint).toBe(false);
    expect(create?.inputSchema.required).toEqual(['name', 'categoryId', 'idempotencyKey']);
    // The contract's own limits: the PetName pattern and length, the status values.
    const properties = create?.inputSchema.properties as Record<string, Record<string, unknown>> | undefined;
    const name = properties?.name;
    expect(name?.maxLength).toBeGreaterThan(0);
    expect(typeof name?.pattern).toBe('string');
    await client.close();
  });

  it('when create_pet is called twice with one idempotencyKey, then one pet is stored, a subscriber gets it once, and the result is GET /v1/pets/{id}', async () => {
    const stream = await subscribeSse(server.baseUrl, {
      query: PET_CREATED,
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    const client = await connected(keys.write, options);
    const idempotencyKey = randomUUID();
    const args = { name: `agent ${revision}`, categoryId: 7, status: 'available', idempotencyKey };
    const first = await client.callTool({ name: 'create_pet', arguments: args });
    const second = await client.callTool({ name: 'create_pet', arguments: args });
    expect(first.isError, JSON.stringify(first.content)).toBeFalsy();
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect([first._meta?.idempotentReplayed, second._meta?.idempotentReplayed]).toEqual([undefined, true]);
    const pet = first.structuredContent as { id: number };
    const got = await server.request
      .get(`${server.restBasePath}/pets/${pet.id}`)
      .set({ Authorization: `Bearer ${API_KEY}` });
    expect(got.body).toEqual(pet);
    expect(JSON.parse((first.content as { text: string }[])[0]?.text ?? '')).toEqual(pet);
    const stored = await restPages(100);
    expect(stored.flat().filter((id) => id === pet.id)).toHaveLength(1);
    expectDelivered(await stream.nextResult(), pet.id);
    await expect(stream.next(1_500)).rejects.toThrow();
    stream.close();
    await client.close();
  });

  it('when a pets:read key calls create_pet by name, then it is refused naming pets:write and nothing is stored', async () => {
    const before = (await restPages(100)).flat();
    const client = await connected(keys.read, options);
    const result = await client.callTool({
      name: 'create_pet',
      arguments: { name: 'not allowed', categoryId: 1, idempotencyKey: randomUUID() },
    });
    expect(result.isError).toBe(true);
    const error = JSON.parse((result.content as { text: string }[])[0]?.text ?? '') as {
      code: string;
      message: string;
    };
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toContain('pets:write');
    expect((await restPages(100)).flat()).toEqual(before);
    await client.close();
  });

  it('when list_pets follows its cursor over 250 pets, then each id comes once, page for page as GET /v1/pets, each result valid against its outputSchema', async () => {
    const writer = await connected(keys.write, options);
    const have = (await restPages(100)).flat().length;
    for (let index = have; index < 250; index++) {
      await server.request
        .post(`${server.restBasePath}/pets`)
        .set({ Authorization: `Bearer ${API_KEY}` })
        .send({ name: `bulk ${index}`, categoryId: 2 });
    }
    await writer.close();
    const client = await connected(keys.read, options);
    const { tools } = await client.listTools();
    const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(tools[0]?.outputSchema as object);
    const pages: number[][] = [];
    let cursor: string | undefined;
    do {
      const result = await client.callTool({
        name: 'list_pets',
        arguments: { limit: 100, ...(cursor ? { cursor } : {}) },
      });
      expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
      const page = result.structuredContent as { pets: { id: number }[]; nextCursor?: string };
      pages.push(page.pets.map((pet) => pet.id));
      cursor = page.nextCursor;
    } while (cursor);
    const ids = pages.flat();
    expect(ids.length).toBeGreaterThanOrEqual(250);
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages).toEqual(await restPages(100));
    await client.close();
  });

  it('when a call names no tool or gives arguments of the wrong type, then the answer says so, never a 500', async () => {
    const client = await connected(keys.write, options);
    await expect(client.callTool({ name: 'delete_everything', arguments: {} })).rejects.toThrow(/delete_everything/);
    const wrong = await client.callTool({ name: 'list_pets', arguments: { limit: 'ten', status: 42 } });
    expect(wrong.isError).toBe(true);
    expect((wrong.content as { text: string }[])[0]?.text).toMatch(/limit/);
    const outOfRange = await client.callTool({ name: 'list_pets', arguments: { limit: 1_000 } });
    expect(outOfRange.isError).toBe(true);
    // Arguments are counted before they are validated: a wide one costs no schema walk.
    const wide = await client.callTool({
      name: 'list_pets',
      arguments: { cursor: Array.from({ length: 100 }, () => 0) },
    });
    expect(wide.isError).toBe(true);
    expect((wide.content as { text: string }[])[0]?.text).toMatch(/more than the maximum of 64 elements/);
    await client.close();
  });
});

describe('MCP at /mcp: the edge', () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(mcpUrl(), {
      method: 'POST',
      headers: rawHeaders(keys.write, headers),
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const listCall = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'list_pets', arguments: { limit: 1 } },
  });

  it('when no key or a wrong key is sent, then 401 with the contract’s Error body and WWW-Authenticate', async () => {
    for (const headers of [{ Authorization: '' }, { Authorization: 'Bearer not-a-key-aaaaaaaaaaaaaaa' }]) {
      const response = await post(initialize, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await response.json()).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    }
    const client = new Client({ name: 'keyless', version: '1' });
    await expect(client.connect(new StreamableHTTPClientTransport(mcpUrl()))).rejects.toThrow(/UNAUTHENTICATED/);
  });

  it('when hostile requests come (a 1 MB argument, a batch, a page from another origin, GET, not JSON), then each gets its clear error', async () => {
    const huge = { ...listCall(2), params: { name: 'list_pets', arguments: { cursor: 'x'.repeat(1_000_000) } } };
    const cases = [
      { response: await post(huge), status: 413, code: 'PAYLOAD_TOO_LARGE' },
      { response: await post([listCall(3), listCall(4)]), status: 400, code: 'BAD_USER_INPUT' },
      { response: await post(initialize, { Origin: 'https://evil.example' }), status: 403, code: 'FORBIDDEN' },
      { response: await post('{"jsonrpc":', {}), status: 400, code: 'INVALID_JSON' },
      {
        response: await post(initialize, { 'Content-Type': 'text/plain' }),
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
      },
      {
        response: await fetch(mcpUrl(), { headers: { Authorization: `Bearer ${keys.write}` } }),
        status: 405,
        code: 'METHOD_NOT_ALLOWED',
      },
    ];
    for (const { response, status, code } of cases) {
      expect(response.status, code).toBe(status);
      expect(await response.json()).toMatchObject({ code, status });
    }
  });

  it('when the message is not a JSON-RPC request (null, a number, no method, a tool name that is not a string), then a JSON-RPC error or a 4xx, never a 500', async () => {
    const odd = [
      null,
      42,
      'tools/call',
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0', id: 1, method: 7 },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: { $ne: '' }, arguments: [] } },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'list_pets' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ];
    for (const message of odd) {
      const response = await post(message);
      const text = await response.text();
      expect(response.status, `${JSON.stringify(message)}: ${text}`).toBeLessThan(500);
      if (response.status === 200) expect(text, JSON.stringify(message)).toMatch(/"error":\{"code":-32\d{3}/);
    }
  });

  it('when tools are called, then each call has one access-log line with the tool’s name, and mcp_tool_calls_total counts it by outcome', async () => {
    const response = await post(listCall(5));
    expect(response.status).toBe(200);
    const reqId = response.headers.get('x-request-id');
    await response.text();
    const line = log.find((entry) => entry.reqId === reqId && entry.msg === 'request');
    expect(line).toMatchObject({ url: '/mcp', status: 200, tool: 'list_pets' });
    const scrape = await server.metrics.scrape.text();
    expect(sampleIn(scrape, 'mcp_tool_calls_total', { tool: 'list_pets', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sampleIn(scrape, 'mcp_tool_calls_total', { tool: 'create_pet', outcome: 'forbidden' })).toBeGreaterThan(0);
    expect(sampleIn(scrape, 'mcp_tool_calls_total', { tool: 'unknown', outcome: 'unknown_tool' })).toBeGreaterThan(0);
    expect(
      sampleIn(scrape, 'mcp_tool_calls_total', { tool: 'list_pets', outcome: 'invalid_arguments' }),
    ).toBeGreaterThan(0);
  });
});

describe('MCP at /mcp: rate limits', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({
      rateLimits: { perKey: { rate: 1, burst: 5 }, authFailures: { rate: 100, burst: 100 } },
    });
  });
  afterAll(() => limited?.close());

  it('with a burst of 5, the sixth call in a second is refused RATE_LIMITED with Retry-After', async () => {
    const call = (id: number) =>
      fetch(mcpUrl(limited), {
        method: 'POST',
        headers: rawHeaders(API_KEY),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'list_pets', arguments: {} },
        }),
      });
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let id = 1; id <= 6; id++) {
      const response = await call(id);
      statuses.push(response.status);
      if (response.status === 429) refused = response;
      else await response.text();
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused?.json()).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
  });
});

describe('MCP at /mcp: what the edge keeps', () => {
  let own: TestServer;
  beforeAll(async () => {
    own = await startTestServer();
  });
  afterAll(() => own?.close());

  const listCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_pets', arguments: {} } };
  /** A raw POST /mcp with headers fetch would not send (a Host of the client's choosing). */
  function rawPost(
    headers: Record<string, string>,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
    const body = JSON.stringify(listCall);
    return new Promise((resolve, reject) => {
      const request = httpRequest(mcpUrl(own), { method: 'POST', headers: rawHeaders(API_KEY, headers) });
      request.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  it('when a pet stored before the name rule breaks its pattern, then list_pets still returns it, as GET /v1/pets does', async () => {
    await own.database.db.collection('pets').insertOne({ _id: 1 as never, name: 'Re\u200bx', categoryId: 1 });
    const client = await connected(API_KEY, {}, own);
    const result = await client.callTool({ name: 'list_pets', arguments: {} });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const rest = await own.request.get(`${own.restBasePath}/pets`).set({ Authorization: `Bearer ${API_KEY}` });
    expect((result.structuredContent as { pets: unknown[] }).pets).toEqual(rest.body);
    await client.close();
  });

  it('when the Host header is no URL authority, then the call is answered all the same', async () => {
    for (const host of ['x:99999', 'a b']) {
      const response = await rawPost({ Host: host });
      expect(response.status, response.body).toBe(200);
      expect(response.body).toContain('"structuredContent"');
    }
  });

  it('when the instance drains, then its /mcp answers close their connection, whatever the SDK says', async () => {
    own.service.drain();
    const response = await rawPost({});
    expect(response.status).toBe(200);
    expect(response.headers.connection).toBe('close');
  });
});
