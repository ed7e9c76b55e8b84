import { describe, expect, it } from 'vitest';
import { expectStatus, restClient } from './support/rest-client.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const APP = 'https://app.example.com';
const FROM_APP = { ...AUTH, Origin: APP };

/**
 * schema/openapi.yaml documents the CORS headers on every answer (optional: CORS is off by default).
 * The REST client checks each answer's headers against the document; these cases make sure they are
 * there to check, on a success, a 304 and the errors that carry rate-limit fields.
 */
describe('with CORS_ORIGINS set, REST answers to a listed origin carry the CORS headers the document gives', () => {
  const server = useTestServer({ corsOrigins: APP });
  const rest = restClient(server);

  const expectCors = (headers: Record<string, string | undefined>) => {
    expect(headers['access-control-allow-origin']).toBe(APP);
    expect(headers['access-control-expose-headers']).toBeDefined();
  };

  it('on 201, 200 and 304', async () => {
    const created = await rest.createPet({ name: 'Documented', categoryId: 1 }, FROM_APP);
    expectStatus(created, 201);
    expectCors(created.headers);
    const page = await rest.listPets('?limit=1', FROM_APP);
    expectStatus(page, 200);
    expectCors(page.headers);
    const unchanged = await rest.listPets('?limit=1', { ...FROM_APP, 'If-None-Match': page.headers.etag ?? '' });
    expectStatus(unchanged, 304);
    expectCors(unchanged.headers);
  });

  it('on 400, 401, 404 and 415, with the key rate-limit fields where a key was counted', async () => {
    const invalid = await rest.listPets('?limit=0', FROM_APP);
    expectStatus(invalid, 400);
    expectCors(invalid.headers);
    expect(invalid.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
    const unauthenticated = await rest.listPets('', { Origin: APP });
    expectStatus(unauthenticated, 401);
    expectCors(unauthenticated.headers);
    const missing = await rest.getPet(9_007_199_254_740_991, FROM_APP);
    expectStatus(missing, 404);
    expectCors(missing.headers);
    expect(missing.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
    const notJson = await rest.createPetFromText('name=Rex', 'text/plain', FROM_APP);
    expectStatus(notJson, 415);
    expectCors(notJson.headers);
  });

  it('and none to an origin it does not list', async () => {
    const page = await rest.listPets('?limit=1', { ...AUTH, Origin: 'https://elsewhere.example.com' });
    expectStatus(page, 200);
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
  });
});
