import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { graphqlRequest, startTestServer, type TestServer } from './support/test-server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

describe('readiness', () => {
  it('answers /ready with 200 while the database answers, without a key', async () => {
    const response = await server.request.get('/ready');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ready' });
  });

  it('answers /ready with 503 and Retry-After when the database is gone', async () => {
    const broken = await startTestServer();
    await broken.database.client.close();
    const response = await broken.request.get('/ready');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    await new Promise<void>((closed) => broken.http.close(() => closed()));
  });
});

describe('GraphQL query limits (GraphQL Armor defaults)', () => {
  it('refuses more than 15 aliases', async () => {
    const aliases = Array.from({ length: 16 }, (_, index) => `a${index}: pets(limit: 1) { id }`).join(' ');
    const response = await graphqlRequest(server, `{ ${aliases} }`);
    expect(response.body.errors[0].message).toMatch(/alias/i);
    expect(response.body.data ?? null).toBeNull();
  });

  it('refuses a document deeper than 6 levels', async () => {
    const response = await graphqlRequest(server, '{ petsConnection { edges { node { id } } pageInfo { endCursor } } __typename }');
    expect(response.body.errors).toBeUndefined();
    const deep = await graphqlRequest(
      server,
      '{ __type(name: "Pet") { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } }',
    );
    expect(deep.body.errors[0].message).toMatch(/depth/i);
  });

  it('still answers the introspection query GraphiQL sends', async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const response = await graphqlRequest(server, getIntrospectionQuery());
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.__schema.queryType.name).toBe('Query');
  });
});

describe('anonymous GraphQL requests', () => {
  it('get 401 before their body is read', async () => {
    const response = await server.request
      .post('/graphql')
      .set('Content-Type', 'application/json')
      .send({ query: `{ pets { id } }`, padding: 'x'.repeat(2_000_000) });
    expect(response.status).toBe(401);
    expect(response.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('bad input never names the wrong field', () => {
  it('names a client-supplied key as it was sent, even when it looks like a path', async () => {
    const response = await graphqlRequest(server, 'mutation ($input: NewPet!) { createPet(input: $input) { id } }', {
      input: { name: 'x', categoryId: 1, 'z at "id"; pwned': 1 },
    });
    expect(response.body.errors[0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.z at "id"; pwned',
      reason: 'is not a known field',
    });
  });

  it('never shows stack traces or original errors to clients', async () => {
    const broken = await startTestServer();
    await broken.database.client.close();
    const response = await graphqlRequest(broken, '{ pets { id } }');
    expect(JSON.stringify(response.body)).not.toMatch(/stack|originalError|at .*\.ts:/);
    await new Promise<void>((closed) => broken.http.close(() => closed()));
  });
});

describe('embedded database directory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-marker-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('will not start FerretDB over data another server wrote', async () => {
    writeFileSync(join(dataDir, '.backend'), 'mongod\n');
    await expect(startEmbeddedDatabase({ dataDir, log: () => {} })).rejects.toThrow(/holds mongod data/);
  });
});
