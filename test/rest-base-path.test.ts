import { describe, expect, it } from 'vitest';
import { expectError } from './support/openapi-contract.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

/** A staging deployment on the same host as another: REST_BASE_PATH=/staging/v1. */
const BASE = '/staging/v1';

const server = useTestServer({ restBasePath: BASE });
/** Checks each answer against the document as a client of this deployment reads it. */
const rest = restClient(server);

describe(`REST under the base path ${BASE}`, () => {
  it('creates a pet and gives its Location under the base path', async () => {
    const response = await rest.createPet({ name: 'Staged', categoryId: 1 });
    expectStatus(response, 201);
    expect(response.headers.location).toBe(`${BASE}/pets/${response.body.id}`);
  });

  it('serves the Location it gave, with deprecation links under the base path', async () => {
    const created = await rest.createPet({ name: 'Located', categoryId: 1 });
    expectStatus(created, 201);
    const response = await rest.followLocation(created.headers.location);
    expectStatus(response, 200);
    expect(response.body).toEqual(created.body);
    expect(response.headers.link).toContain(`<${BASE}/pets>; rel="successor-version"`);
    expect(response.headers.link).not.toMatch(/<\/v1\//);
  });

  it('lists pets, with a next link under the base path that can be followed to the end', async () => {
    const one = await rest.addPet({ name: 'One', categoryId: 1 });
    const two = await rest.addPet({ name: 'Two', categoryId: 1 });
    const { pages, links } = await rest.walk(`${BASE}/pets?limit=1`);
    for (const link of links) expect(link).toMatch(new RegExp(`^${BASE}/pets\\?limit=1&cursor=[^>]+$`));
    const seen = pages.flat();
    expect(seen).toEqual(expect.arrayContaining([one.id, two.id]));
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it('answers errors under the base path as the contract says', async () => {
    const unauthenticated = await rest.listPets('', {});
    expectError(unauthenticated, 401, 'UNAUTHENTICATED');
    const notFound = await rest.send('GET', `${BASE}/nope`);
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
