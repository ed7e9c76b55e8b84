import { describe, expect, it } from 'vitest';
import { expectError } from './support/openapi-contract.ts';
import { restClient } from './support/rest-client.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const server = useTestServer();
const rest = restClient(server);

const NEW_PET = JSON.stringify({ name: 'x', categoryId: 1 });

describe('when a client calls a path under /v1 that is not a route', () => {
  it.each(['/v1/nope', '/v1/pets/1/extra', '/v1/pets/', '/v1/pets/1/', '/v1', '/v1/', '/v1//pets', '/v1/PETS'])(
    'then GET %s gets 404 ROUTE_NOT_FOUND and an Error body',
    async (path) => {
      const response = await rest.send('GET', path);
      expectError(response, 404, 'ROUTE_NOT_FOUND');
    },
  );

  it('then a POST gets 404 ROUTE_NOT_FOUND and nothing is stored', async () => {
    const unknown = await rest.storesNothing(() => rest.send('POST', '/v1/animals', { body: NEW_PET }));
    expectError(unknown, 404, 'ROUTE_NOT_FOUND');
  });
});

describe('when a client uses a method a route does not have', () => {
  it.each([
    ['DELETE', '/v1/pets', 'GET, POST, HEAD'],
    ['PUT', '/v1/pets', 'GET, POST, HEAD'],
    ['PATCH', '/v1/pets', 'GET, POST, HEAD'],
    ['POST', '/v1/pets/1', 'GET, HEAD'],
    ['PUT', '/v1/pets/1', 'GET, HEAD'],
    ['PATCH', '/v1/pets/1', 'GET, HEAD'],
    ['DELETE', '/v1/pets/1', 'GET, HEAD'],
  ] as const)('then %s %s gets 405 METHOD_NOT_ALLOWED and Allow: %s', async (method, path, allow) => {
    const response = await rest.send(method, path, { body: NEW_PET });
    expectError(response, 405, 'METHOD_NOT_ALLOWED');
    expect(response.headers.allow).toBe(allow);
  });

  it('then nothing is stored on a 405', async () => {
    const response = await rest.storesNothing(() => rest.send('PUT', '/v1/pets', { body: NEW_PET }));
    expectError(response, 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('when a client sends HEAD', () => {
  it('then it gets what GET gets, the same status and headers, with no body (RFC 9110 §9.1)', async () => {
    // HEAD is no operation of the document, and its error answers have no Error body to check.
    const list = await rest.request.head('/v1/pets?limit=1').set(AUTH);
    expect(list.status).toBe(200);
    expect(list.headers['content-type']).toContain('application/json');
    expect(list.text ?? '').toBe('');
    const unauthenticated = await rest.request.head('/v1/pets');
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers['www-authenticate']).toMatch(/^Bearer/);
  });
});
