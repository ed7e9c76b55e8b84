import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, OTHER_API_KEY, startTestServer, type TestServer } from './support/test-server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

const LIST = '{ pets { id } }';
const INTROSPECTION = '{ __schema { queryType { name } } }';

function post(query: string, authorization?: string) {
  const request = server.request.post('/graphql').set('Accept', 'application/graphql-response+json');
  return (authorization === undefined ? request : request.set('Authorization', authorization)).send({ query });
}

describe('GraphQL authentication', () => {
  it.each([
    ['no Authorization header', undefined, 'Bearer realm="petstore"'],
    ['a wrong key', 'Bearer not-the-right-key-at-all', 'Bearer realm="petstore", error="invalid_token"'],
    ['another scheme', `Basic ${Buffer.from('user:pass').toString('base64')}`, 'Bearer realm="petstore", error="invalid_token"'],
    ['the scheme alone', 'Bearer', 'Bearer realm="petstore", error="invalid_token"'],
    ['a key with a space in it', `Bearer ${API_KEY} extra`, 'Bearer realm="petstore", error="invalid_token"'],
  ])('when a client sends %s, then it gets 401 UNAUTHENTICATED with a Bearer challenge', async (_what, authorization, challenge) => {
    const response = await post(LIST, authorization);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe(challenge);
    expect(response.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(response.body.data ?? null).toBeNull();
  });

  it('needs a key for introspection too', async () => {
    const response = await post(INTROSPECTION);
    expect(response.status).toBe(401);
    expect(response.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('answers 401, not a validation error, for an invalid document without a key', async () => {
    const response = await post('{ notAField }');
    expect(response.status).toBe(401);
  });

  it('does not run a mutation without a key', async () => {
    const response = await post('mutation { createPet(input: { name: "Ghost", categoryId: 1 }) { id } }');
    expect(response.status).toBe(401);
    const listed = await post('{ pets(limit: 100) { name } }', `Bearer ${API_KEY}`);
    expect(listed.body.data.pets.map((pet: { name: string }) => pet.name)).not.toContain('Ghost');
  });

  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('accepts the scheme spelled %s', async (scheme) => {
    const response = await post(INTROSPECTION, `${scheme} ${API_KEY}`);
    expect(response.status).toBe(200);
    expect(response.body.data.__schema.queryType.name).toBe('Query');
  });

  it('accepts every configured key', async () => {
    const response = await post(LIST, `Bearer ${OTHER_API_KEY}`);
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body.data.pets)).toBe(true);
  });

  it('answers GET queries with the same rule', async () => {
    const denied = await server.request.get('/graphql').query({ query: LIST }).set('Accept', 'application/json');
    expect(denied.status).toBe(401);
    const allowed = await server.request
      .get('/graphql')
      .query({ query: LIST })
      .set('Accept', 'application/json')
      .set('Authorization', `Bearer ${API_KEY}`);
    expect(allowed.status).toBe(200);
    expect(allowed.body.data.pets).toBeInstanceOf(Array);
  });
});

describe('unauthenticated pages', () => {
  it('serves GraphiQL to a browser without a key', async () => {
    const response = await server.request.get('/graphql').set('Accept', 'text/html');
    expect(response.status).toBe(200);
    expect(response.text).toContain('GraphiQL');
    expect(response.text).not.toMatch(/https?:\/\/(unpkg|cdn|esm\.sh)/);
  });

  it('answers the health check without a key', async () => {
    const response = await server.request.get('/health');
    expect(response.status).toBe(200);
  });
});
