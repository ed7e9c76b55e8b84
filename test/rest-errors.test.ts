import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REST_ERRORS } from '../src/rest/http-errors.ts';
import {
  assertErrorResponse,
  errorCodes,
  expectContract,
  expectError,
  loadOpenApiDocument,
} from './support/openapi-contract.ts';
import { API_KEY, AUTH, startTestServer, type TestServer } from './support/test-server.ts';

const SMALL_LIMIT = 1024;
const DEFAULT_LIMIT = 16_384;

let server: TestServer;
/** The same service with a 1 KiB body limit, as MAX_BODY_BYTES=1024 configures it. */
let small: TestServer;

beforeAll(async () => {
  [server, small] = await Promise.all([startTestServer(), startTestServer({ maxBodyBytes: SMALL_LIMIT })]);
});
afterAll(async () => {
  await Promise.all([server?.close(), small?.close()]);
});

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: unknown;
}

/**
 * A request through node:http, for what supertest does not let us shape: no Content-Type at all,
 * or a body sent in chunks (Transfer-Encoding: chunked, no Content-Length).
 */
function rawRequest(
  target: TestServer,
  options: { method: string; path: string; headers?: Record<string, string>; chunks?: Array<string | Buffer> },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(options.path, target.baseUrl);
    const request = httpRequest(url, { method: options.method, headers: options.headers ?? {} }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
      });
      response.on('error', reject);
    });
    // A socket error after the answer arrived does not matter; before it, there is no answer at all.
    let answered = false;
    request.on('response', () => {
      answered = true;
    });
    request.on('error', (error) => {
      if (!answered) reject(new Error(`no HTTP response: ${error.message}`));
    });
    for (const chunk of options.chunks ?? []) request.write(chunk);
    request.end();
  });
}

function postPets(target: TestServer, contentType: string | null, body: string) {
  const call = target.request.post('/v1/pets').set(AUTH);
  if (contentType !== null) call.set('Content-Type', contentType);
  return call.send(body);
}

async function storedIds(target: TestServer): Promise<number[]> {
  const response = expectContract(await target.request.get('/v1/pets?limit=100').set(AUTH), 'GET', '/pets');
  expect(response.status).toBe(200);
  expect(response.body.length).toBeLessThan(100);
  return response.body.map((pet: { id: number }) => pet.id);
}

/** Valid NewPet JSON padded with insignificant whitespace to exactly `bytes` bytes. */
function jsonOfSize(bytes: number, name = 'Edge'): string {
  const json = JSON.stringify({ name, categoryId: 1 });
  const size = Buffer.byteLength(json);
  if (size > bytes) throw new Error(`cannot make ${bytes} bytes of ${json}`);
  return `${json}${' '.repeat(bytes - size)}`;
}

describe('the Error code set', () => {
  it('is the same closed set in the document and in the service', () => {
    expect([...errorCodes()].sort()).toEqual(Object.keys(REST_ERRORS).sort());
  });

  it('gives each code the HTTP status the document table gives it', () => {
    const schemas = (loadOpenApiDocument().components as { schemas: Record<string, { description: string }> }).schemas;
    const table = Object.fromEntries(
      [...schemas.Error!.description.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [code, Number(status)]),
    );
    expect(Object.keys(table).sort()).toEqual([...errorCodes()].sort());
    expect(table).toEqual(REST_ERRORS);
  });
});

describe('routing under /v1', () => {
  it.each(['/v1/nope', '/v1/pets/1/extra', '/v1/pets/', '/v1/pets/1/', '/v1', '/v1/', '/v1//pets', '/v1/PETS'])(
    'answers %s with 404 ROUTE_NOT_FOUND and an Error body',
    async (path) => {
      const response = await server.request.get(path).set(AUTH);
      assertErrorResponse(response);
      expectError(response, 404, 'ROUTE_NOT_FOUND');
    },
  );

  it('answers 404 ROUTE_NOT_FOUND for a POST to an unknown path, storing nothing', async () => {
    const before = await storedIds(server);
    const unknown = await server.request.post('/v1/animals').set(AUTH).send({ name: 'x', categoryId: 1 });
    assertErrorResponse(unknown);
    expectError(unknown, 404, 'ROUTE_NOT_FOUND');
    expect(await storedIds(server)).toEqual(before);
  });

  it.each([
    ['DELETE', '/v1/pets', 'GET, POST, HEAD'],
    ['PUT', '/v1/pets', 'GET, POST, HEAD'],
    ['PATCH', '/v1/pets', 'GET, POST, HEAD'],
    ['POST', '/v1/pets/1', 'GET, HEAD'],
    ['PUT', '/v1/pets/1', 'GET, HEAD'],
    ['PATCH', '/v1/pets/1', 'GET, HEAD'],
    ['DELETE', '/v1/pets/1', 'GET, HEAD'],
  ])('answers %s %s with 405 METHOD_NOT_ALLOWED and Allow: %s', async (method, path, allow) => {
    const response = await server.request[method.toLowerCase() as 'delete' | 'put' | 'patch' | 'post'](path)
      .set(AUTH)
      .type('application/json')
      .send(JSON.stringify({ name: 'x', categoryId: 1 }));
    assertErrorResponse(response);
    expectError(response, 405, 'METHOD_NOT_ALLOWED');
    expect(response.headers.allow).toBe(allow);
  });

  it('answers HEAD wherever GET answers, with the same status and headers and no body (RFC 9110 §9.1)', async () => {
    const list = await server.request.head('/v1/pets?limit=1').set(AUTH);
    expect(list.status).toBe(200);
    expect(list.headers['content-type']).toContain('application/json');
    expect(list.text ?? '').toBe('');
    const unauthenticated = await server.request.head('/v1/pets');
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('stores nothing on a 405', async () => {
    const before = await storedIds(server);
    const response = await server.request.put('/v1/pets').set(AUTH).send({ name: 'x', categoryId: 1 });
    assertErrorResponse(response);
    expect(response.status).toBe(405);
    expect(await storedIds(server)).toEqual(before);
  });
});

describe('request bodies of createPet', () => {
  it.each([
    ['truncated JSON', '{"name":'],
    ['JSON with a trailing comma', '{"name":"x","categoryId":1,}'],
    ['single-quoted pseudo-JSON', "{'name':'x','categoryId':1}"],
    ['an empty body', ''],
    ['whitespace only', '   '],
  ])('when the body is %s, then 400 INVALID_JSON and nothing is stored', async (_what, body) => {
    const before = await storedIds(server);
    const response = expectContract(await postPets(server, 'application/json', body), 'POST', '/pets');
    expectError(response, 400, 'INVALID_JSON');
    expect(await storedIds(server)).toEqual(before);
  });

  it('when the body is not valid UTF-8, then 400 INVALID_JSON', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","categoryId":1}')]);
    // node:http, because superagent would serialise a Buffer as JSON ({"type":"Buffer","data":[...]}).
    const response = await rawRequest(server, {
      method: 'POST',
      path: '/v1/pets',
      headers: { ...AUTH, 'Content-Type': 'application/json', 'Content-Length': String(bytes.byteLength) },
      chunks: [bytes],
    });
    expectContract(response, 'POST', '/pets');
    expectError(response, 400, 'INVALID_JSON');
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['text/plain with utf-8', 'text/plain; charset=utf-8'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['a JSON-like subtype', 'application/merge-patch+json'],
    ['JSON in another charset', 'application/json; charset=iso-8859-1'],
    ['a malformed media type', 'application/json;;'],
  ])('when the Content-Type is %s, then 415 UNSUPPORTED_MEDIA_TYPE and nothing is stored', async (_what, contentType) => {
    const before = await storedIds(server);
    const response = expectContract(
      await postPets(server, contentType, JSON.stringify({ name: 'Typed', categoryId: 1 })),
      'POST',
      '/pets',
    );
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(await storedIds(server)).toEqual(before);
  });

  it('when the Content-Type header is missing, then 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const body = JSON.stringify({ name: 'Untyped', categoryId: 1 });
    const response = await rawRequest(server, {
      method: 'POST',
      path: '/v1/pets',
      headers: { ...AUTH, 'Content-Length': String(Buffer.byteLength(body)) },
      chunks: [body],
    });
    expectContract(response, 'POST', '/pets');
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it.each(['application/json; charset=utf-8', 'application/json; charset=UTF-8', 'Application/JSON'])(
    'accepts the Content-Type %j',
    async (contentType) => {
      const response = expectContract(
        await postPets(server, contentType, JSON.stringify({ name: 'Typed', categoryId: 1 })),
        'POST',
        '/pets',
      );
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ name: 'Typed', categoryId: 1 });
    },
  );
});

describe('the request body size limit', () => {
  it(`accepts a body of exactly ${DEFAULT_LIMIT} bytes by default`, async () => {
    const response = expectContract(await postPets(server, 'application/json', jsonOfSize(DEFAULT_LIMIT)), 'POST', '/pets');
    expect(response.status).toBe(201);
  });

  it(`refuses a body of ${DEFAULT_LIMIT + 1} bytes by default with 413 PAYLOAD_TOO_LARGE, storing nothing`, async () => {
    const before = await storedIds(server);
    const response = expectContract(await postPets(server, 'application/json', jsonOfSize(DEFAULT_LIMIT + 1)), 'POST', '/pets');
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
    expect(await storedIds(server)).toEqual(before);
  });

  it('accepts a body of exactly the configured limit', async () => {
    const response = expectContract(await postPets(small, 'application/json', jsonOfSize(SMALL_LIMIT)), 'POST', '/pets');
    expect(response.status).toBe(201);
  });

  it('refuses a body one byte over the configured limit (with Content-Length) with 413, storing nothing', async () => {
    const before = await storedIds(small);
    const response = expectContract(await postPets(small, 'application/json', jsonOfSize(SMALL_LIMIT + 1)), 'POST', '/pets');
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
    expect(await storedIds(small)).toEqual(before);
  });

  it('refuses a much larger body (1 MiB, with Content-Length) with 413', async () => {
    const response = expectContract(await postPets(small, 'application/json', jsonOfSize(1024 * 1024)), 'POST', '/pets');
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('counts the limit in bytes, not characters', async () => {
    // 100 three-byte characters: 1000 characters in all but 1200 bytes of UTF-8.
    const body = jsonOfSize(1200, '€'.repeat(100));
    expect(body.length).toBeLessThanOrEqual(SMALL_LIMIT);
    const response = expectContract(await postPets(small, 'application/json', body), 'POST', '/pets');
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses a chunked body (no Content-Length) once it passes the limit, storing nothing', async () => {
    const before = await storedIds(small);
    const body = jsonOfSize(4 * SMALL_LIMIT);
    const chunks = [body.slice(0, 512), body.slice(512, 1024), body.slice(1024, 2048), body.slice(2048)];
    const response = await rawRequest(small, {
      method: 'POST',
      path: '/v1/pets',
      headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      chunks,
    });
    expectContract(response, 'POST', '/pets');
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
    expect(await storedIds(small)).toEqual(before);
  });

  it('accepts a chunked body within the limit', async () => {
    const body = jsonOfSize(SMALL_LIMIT, 'Chunked');
    const response = await rawRequest(small, {
      method: 'POST',
      path: '/v1/pets',
      headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      chunks: [body.slice(0, 10), body.slice(10, 700), body.slice(700)],
    });
    expectContract(response, 'POST', '/pets');
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ name: 'Chunked', categoryId: 1 });
  });
});
