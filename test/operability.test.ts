import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { getIntrospectionQuery, type IntrospectionQuery, parse, print } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { READY_ANSWER_TTL_MS } from '../src/edge/health.ts';
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

describe('readiness under a crowd of probes (no key needed, so anyone can send them)', () => {
  let pings = 0;
  let stalled = false;
  const counted = useTestServer({
    wrapStores: (stores) => ({
      ...stores,
      ping: (signal) => {
        pings++;
        // A database that stops answering: only the deadline of /ready ends the wait.
        return stalled ? new Promise<void>(() => {}) : stores.ping(signal);
      },
    }),
  });
  const crowd = (count: number) =>
    Promise.all(Array.from({ length: count }, () => fetch(`${counted.baseUrl}/ready`).then((res) => res.status)));
  const afterTheAnswerExpires = () => new Promise((resolve) => setTimeout(resolve, READY_ANSWER_TTL_MS + 100));

  it('shares one database ping among 500 concurrent /ready requests, all answered 200', async () => {
    await afterTheAnswerExpires();
    const before = pings;
    const statuses = await crowd(500);
    expect(new Set(statuses)).toEqual(new Set([200]));
    // One ping, or two if the crowd outlived one answer's lifetime.
    expect(pings - before).toBeGreaterThanOrEqual(1);
    expect(pings - before).toBeLessThanOrEqual(2);
  });

  it('pings again once the answer is older than its lifetime', async () => {
    await afterTheAnswerExpires();
    const before = pings;
    expect((await fetch(`${counted.baseUrl}/ready`)).status).toBe(200);
    expect(pings - before).toBe(1);
  });

  it('answers a crowd 503 within the deadline when the database stalls, still with one ping', async () => {
    await afterTheAnswerExpires();
    stalled = true;
    const before = pings;
    const startedAt = performance.now();
    const statuses = await crowd(200);
    stalled = false;
    expect(new Set(statuses)).toEqual(new Set([503]));
    expect(performance.now() - startedAt).toBeLessThan(2_000);
    expect(pings - before).toBe(1);
  });
});

// The documents these limits refuse are inline on purpose: they break the limits, not the schema.
describe("GraphQL query limits (GraphQL Armor's defaults)", () => {
  it('refuses more than 15 aliases', async () => {
    const aliases = Array.from({ length: 16 }, (_, index) => `a${index}: pets(limit: 1) { id }`).join(' ');
    const response = await executeGraphQL(server, `{ ${aliases} }`);
    expect(firstError(response).message).toMatch(/alias/i);
    expect(response.body.data ?? null).toBeNull();
  });

  it('refuses a document deeper than 6 levels', async () => {
    const response = await executeGraphQL(server, DeepestAllowedDocument, {});
    expect(response.body.errors).toBeUndefined();
    // Counted before the fields are checked against the schema, which has nothing this deep: an
    // introspection document (GraphiQL's is deep) counts no depth, bounded by its cost instead.
    const deep = await executeGraphQL(server, '{ a { b { c { d { e { f { g } } } } } } }');
    expect(firstError(deep).message).toMatch(/levels deep/);
    expect(firstError(deep).extensions?.code).toBe('QUERY_TOO_DEEP');
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
