import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertErrorResponse, expectContract, expectError } from './support/openapi-contract.ts';
import { AUTH, startTestServer, type TestServer } from './support/test-server.ts';

/** A staging deployment on the same host as another: REST_BASE_PATH=/staging/v1. */
const BASE = '/staging/v1';
const contract = { basePath: BASE };

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ restBasePath: BASE });
});
afterAll(async () => server.close());

async function create(name: string) {
  const response = expectContract(await server.request.post(`${BASE}/pets`).set(AUTH).send({ name, categoryId: 1 }), 'POST', '/pets', contract);
  expect(response.status).toBe(201);
  return response;
}

describe(`REST under the base path ${BASE}`, () => {
  it('creates a pet and gives its Location under the base path', async () => {
    const response = await create('Staged');
    expect(response.headers.location).toBe(`${BASE}/pets/${response.body.id}`);
  });

  it('serves the Location it gave, with deprecation links under the base path', async () => {
    const created = await create('Located');
    const response = expectContract(await server.request.get(created.headers.location!).set(AUTH), 'GET', '/pets/{petId}', contract);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(created.body);
    expect(response.headers.link).toContain(`<${BASE}/pets>; rel="successor-version"`);
    expect(response.headers.link).not.toMatch(/<\/v1\//);
  });

  it('lists pets, with a next link under the base path that can be followed to the end', async () => {
    const ids = [(await create('One')).body.id, (await create('Two')).body.id];
    const seen: number[] = [];
    let url: string | undefined = `${BASE}/pets?limit=1`;
    while (url) {
      const response: { status: number; body: Array<{ id: number }>; headers: Record<string, string> } = expectContract(
        await server.request.get(url).set(AUTH),
        'GET',
        '/pets',
        contract,
      );
      expect(response.status).toBe(200);
      seen.push(...response.body.map((pet) => pet.id));
      const link: string | undefined = response.headers.link;
      if (link) expect(link).toMatch(new RegExp(`^<${BASE}/pets\\?limit=1&cursor=[^>]+>; rel="next"$`));
      url = link ? /^<([^>]+)>/.exec(link)![1] : undefined;
    }
    expect(seen).toEqual(expect.arrayContaining(ids));
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it('answers errors under the base path as the contract says', async () => {
    const unauthenticated = expectContract(await server.request.get(`${BASE}/pets`), 'GET', '/pets', contract);
    expectError(unauthenticated, 401, 'UNAUTHENTICATED');
    const notFound = await server.request.get(`${BASE}/nope`).set(AUTH);
    assertErrorResponse(notFound);
    expectError(notFound, 404, 'ROUTE_NOT_FOUND');
  });

  it('serves the document at the base path', async () => {
    const response = await server.request.get(`${BASE}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.body.openapi).toMatch(/^3\.1\./);
  });

  it('serves a document whose server URL is the base path it is served under', async () => {
    // A client generated from this document resolves its paths against servers[0].url.
    const response = await server.request.get(`${BASE}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.body.servers.map((entry: { url: string }) => entry.url)).toContain(BASE);
  });

  it.each(['/v1/pets', '/v1/pets/1', '/v1/openapi.json'])('does not serve %s (left to Yoga: 404)', async (path) => {
    const response = await server.request.get(path).set(AUTH);
    expect(response.status).toBe(404);
  });
});
