import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { getIntrospectionQuery, type IntrospectionQuery, parse, print } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { dataOf, executeGraphQL, firstError } from './support/graphql-client.ts';
import { DeepestAllowedDocument, PetsDocument } from './support/operations.ts';
import { startServerWithLostDatabase, useTestServer } from './support/test-server.ts';

const server = useTestServer();

describe('readiness', () => {
  it('answers /ready with 200 while the database answers, without a key', async () => {
    const response = await server.request.get('/ready');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ready' });
  });

  it('answers /ready with 503 and Retry-After when the database is gone', async () => {
    const broken = await startServerWithLostDatabase();
    const response = await broken.request.get('/ready');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    await broken.close();
  });
});

// The documents these limits refuse are inline on purpose: they break the limits, not the schema.
describe('GraphQL query limits (GraphQL Armor defaults)', () => {
  it('refuses more than 15 aliases', async () => {
    const aliases = Array.from({ length: 16 }, (_, index) => `a${index}: pets(limit: 1) { id }`).join(' ');
    const response = await executeGraphQL(server, `{ ${aliases} }`);
    expect(firstError(response).message).toMatch(/alias/i);
    expect(response.body.data ?? null).toBeNull();
  });

  it('refuses a document deeper than 6 levels', async () => {
    const response = await executeGraphQL(server, DeepestAllowedDocument, {});
    expect(response.body.errors).toBeUndefined();
    const deep = await executeGraphQL(
      server,
      '{ __type(name: "Pet") { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } }',
    );
    expect(firstError(deep).message).toMatch(/depth/i);
  });

  it('still answers the introspection query GraphiQL sends', async () => {
    const introspection: TypedDocumentNode<IntrospectionQuery, Record<string, never>> = parse(getIntrospectionQuery());
    const response = await executeGraphQL(server, introspection, {});
    expect(response.body.errors).toBeUndefined();
    expect(dataOf(response).__schema.queryType.name).toBe('Query');
  });
});

describe('anonymous GraphQL requests', () => {
  it('get 401 before their body is read', async () => {
    const response = await server.request
      .post('/graphql')
      .set('Content-Type', 'application/json')
      .send({ query: print(PetsDocument), padding: 'x'.repeat(2_000_000) });
    expect(response.status).toBe(401);
    expect(response.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
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
