import { print } from 'graphql';
import { describe, expect, it } from 'vitest';
import { dataOf, executeGraphQL, firstError } from './support/graphql-client.ts';
import { CreatePetDocument, PetsDocument, QueryTypeNameDocument } from './support/operations.ts';
import { API_KEY, OTHER_API_KEY, useTestServer } from './support/test-server.ts';

const server = useTestServer();

/** The official media type, so that the HTTP status tells what happened; no Authorization unless given. */
function headers(authorization?: string): Record<string, string> {
  const accept = { Accept: 'application/graphql-response+json' };
  return authorization === undefined ? accept : { ...accept, Authorization: authorization };
}

describe('GraphQL authentication', () => {
  it.each([
    ['no Authorization header', undefined, 'Bearer realm="petstore"'],
    ['a wrong key', 'Bearer not-the-right-key-at-all', 'Bearer realm="petstore", error="invalid_token"'],
    [
      'another scheme',
      `Basic ${Buffer.from('user:pass').toString('base64')}`,
      'Bearer realm="petstore", error="invalid_token"',
    ],
    ['the scheme alone', 'Bearer', 'Bearer realm="petstore", error="invalid_token"'],
    ['a key with a space in it', `Bearer ${API_KEY} extra`, 'Bearer realm="petstore", error="invalid_token"'],
  ])(
    'when a client sends %s, then it gets 401 UNAUTHENTICATED with a Bearer challenge',
    async (_what, authorization, challenge) => {
      const response = await executeGraphQL(server, PetsDocument, {}, headers(authorization));
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toBe(challenge);
      expect(firstError(response).extensions?.code).toBe('UNAUTHENTICATED');
      expect(response.body.data ?? null).toBeNull();
    },
  );

  it('needs a key for introspection too', async () => {
    const response = await executeGraphQL(server, QueryTypeNameDocument, {}, headers());
    expect(response.status).toBe(401);
    expect(firstError(response).extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('answers 401, not a validation error, for an invalid document without a key', async () => {
    // Inline on purpose: the document is invalid.
    const response = await executeGraphQL(server, '{ notAField }', {}, headers());
    expect(response.status).toBe(401);
  });

  it('does not run a mutation without a key', async () => {
    const ghost = { input: { name: 'Ghost', categoryId: 1 } };
    const response = await executeGraphQL(server, CreatePetDocument, ghost, headers());
    expect(response.status).toBe(401);
    const listed = await executeGraphQL(server, PetsDocument, { limit: 100 }, headers(`Bearer ${API_KEY}`));
    expect(dataOf(listed).pets.map((pet) => pet.name)).not.toContain('Ghost');
  });

  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('accepts the scheme spelled %s', async (scheme) => {
    const response = await executeGraphQL(server, QueryTypeNameDocument, {}, headers(`${scheme} ${API_KEY}`));
    expect(response.status).toBe(200);
    expect(dataOf(response).__schema.queryType.name).toBe('Query');
  });

  it('accepts every configured key', async () => {
    const response = await executeGraphQL(server, PetsDocument, {}, headers(`Bearer ${OTHER_API_KEY}`));
    expect(response.status).toBe(200);
    expect(Array.isArray(dataOf(response).pets)).toBe(true);
  });

  it('answers GET queries with the same rule', async () => {
    // GET carries the document in the query string: supertest, not the POSTing GraphQL helper.
    const query = print(PetsDocument);
    const denied = await server.request.get('/graphql').query({ query }).set('Accept', 'application/json');
    expect(denied.status).toBe(401);
    const allowed = await server.request
      .get('/graphql')
      .query({ query })
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
