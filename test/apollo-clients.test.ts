import { createHash, randomBytes } from 'node:crypto';
import { ApolloClient, ApolloLink, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { createPersistedDocumentStore } from '../src/documents/published-documents.ts';
import { API_KEY, startTestServer, type TestServer, useTestServer } from './support/test-server.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** One request as it crossed the wire: what it carried, and what came back. */
interface Sent {
  method: string;
  query: boolean;
  hash: boolean;
  status: number;
  code: string | undefined;
}

/** A fetch that records every request the client makes, reading bodies from copies. */
function recordingFetch(wire: Sent[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    const params: Record<string, unknown> =
      method === 'GET'
        ? { query: url.searchParams.get('query'), extensions: url.searchParams.get('extensions') }
        : JSON.parse(String(init?.body));
    const response = await fetch(input, init);
    const body = (await response.clone().json()) as { errors?: { extensions?: { code?: string } }[] };
    wire.push({
      method,
      query: typeof params.query === 'string' && params.query !== '',
      hash: JSON.stringify(params.extensions ?? '').includes('sha256Hash'),
      status: response.status,
      code: body.errors?.[0]?.extensions?.code,
    });
    return response;
  };
}

/** Apollo Client 4 as its docs set up automatic persisted queries, with a key and a recorded wire. */
function apolloWithApq(server: TestServer, key: string, useGETForHashedQueries: boolean) {
  const wire: Sent[] = [];
  const http = new HttpLink({
    uri: `${server.baseUrl}/graphql`,
    headers: { Authorization: `Bearer ${key}` },
    fetch: recordingFetch(wire),
  });
  const link = ApolloLink.from([new PersistedQueryLink({ sha256, useGETForHashedQueries }), http]);
  const client = new ApolloClient({ link, cache: new InMemoryCache() });
  return { client, wire };
}

/** A query no other test has sent, so its hash is new to the server. */
const freshQuery = (prefix: string) =>
  gql(`query ${prefix}${randomBytes(4).toString('hex')}($limit: Int) { pets(limit: $limit) { id name } }`);

describe('Apollo Client 4 with PersistedQueryLink, default configuration (TRUSTED_DOCUMENTS=off)', () => {
  const server = useTestServer();

  beforeAll(async () => {
    await server.request
      .post('/graphql')
      .set({ Authorization: `Bearer ${API_KEY}` })
      .send({ query: 'mutation { createPet(input: { name: "Apq", categoryId: 1 }) { id } }' })
      .expect(200);
  });

  it.each([
    ['POST', false, 'POST'],
    ['GET (useGETForHashedQueries)', true, 'GET'],
  ])(
    'by %s: the same query twice gets data both times; the text crosses the wire once',
    async (_label, useGet, hashMethod) => {
      const { client, wire } = apolloWithApq(server, API_KEY, useGet);
      const query = freshQuery('Apq');
      for (let time = 0; time < 2; time++) {
        const { data, error } = await client.query({ query, variables: { limit: 5 }, fetchPolicy: 'network-only' });
        expect(error).toBeUndefined();
        expect((data as { pets: { name: string }[] }).pets.map((pet) => pet.name)).toContain('Apq');
      }
      expect(wire).toEqual([
        // First: the hash alone is unknown, answered as Apollo's link expects...
        { method: hashMethod, query: false, hash: true, status: 404, code: 'PERSISTED_QUERY_NOT_FOUND' },
        // ...so it resends with the text (always by POST), which is checked and kept.
        { method: 'POST', query: true, hash: true, status: 200, code: undefined },
        // Second: the hash alone is served.
        { method: hashMethod, query: false, hash: true, status: 200, code: undefined },
      ]);
    },
  );

  it('a second client (another process, same instance) is served by hash at once', async () => {
    const query = freshQuery('Shared');
    await apolloWithApq(server, API_KEY, false).client.query({ query, variables: { limit: 1 } });
    const { client, wire } = apolloWithApq(server, API_KEY, true);
    const { data } = await client.query({ query, variables: { limit: 1 } });
    expect((data as { pets: unknown[] }).pets).toHaveLength(1);
    expect(wire.map((sent) => [sent.method, sent.query, sent.status])).toEqual([['GET', false, 200]]);
  });
});

describe('TRUSTED_DOCUMENTS=enforce: a key limited to published documents cannot register', () => {
  let server: TestServer;
  let limitedKey: string;
  const published = 'query ApqPublished($limit: Int) { pets(limit: $limit) { id name } }';

  beforeAll(async () => {
    server = await startTestServer({ trustedDocuments: 'enforce' });
    // Apollo's link sends the text as graphql-js prints it, with __typename: publish that text.
    const { print } = await import('graphql');
    const text = print(new InMemoryCache().transformDocument(gql(published)));
    await createPersistedDocumentStore(server.database.db).publish([
      { id: `sha256:${sha256(text)}`, document: text, operations: [{ name: 'ApqPublished', type: 'query' }] },
    ]);
    ({ key: limitedKey } = await createApiKeyStore(server.database.db).issue({ name: 'web' }));
    // Keys and published ids are read every 2 s.
    await vi.waitFor(
      async () => {
        const { client } = apolloWithApq(server, limitedKey, false);
        const { error } = await client.query({ query: gql(published), variables: { limit: 1 } });
        expect(error).toBeUndefined();
      },
      { timeout: 10_000, interval: 200 },
    );
  });
  afterAll(() => server.close());

  it.each([false, true])(
    'useGET %s: an unpublished query fails with NOT_IN_LIST, no retry, nothing kept',
    async (useGet) => {
      const query = freshQuery('Unlisted');
      const { client, wire } = apolloWithApq(server, limitedKey, useGet);
      const { error } = await client.query({ query, variables: { limit: 1 } }).catch((thrown) => ({ error: thrown }));
      expect(String(error)).toMatch(/No published document has this id/);
      expect(wire.map((sent) => [sent.query, sent.code])).toEqual([[false, 'PERSISTED_QUERY_NOT_IN_LIST']]);

      // The text with its hash, as the link would retry it, is refused and not registered.
      const { print } = await import('graphql');
      const text = print(new InMemoryCache().transformDocument(query));
      const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(text) } };
      const retry = await server.request
        .post('/graphql')
        .set({ Authorization: `Bearer ${limitedKey}` })
        .send({ query: text, extensions });
      expect(retry.body.errors?.[0]?.extensions?.code).toBe('CANNOT_SEND_PQ_ID_AND_BODY');
      expect(retry.body.data).toBeUndefined();
      // A key that may register finds nothing under that hash.
      const byHash = await server.request
        .post('/graphql')
        .set({ Authorization: `Bearer ${API_KEY}` })
        .send({ extensions });
      expect(byHash.status).toBe(404);
      expect(byHash.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    },
  );

  it.each([false, true])('useGET %s: a published query is served by hash on the first request', async (useGet) => {
    const { client, wire } = apolloWithApq(server, limitedKey, useGet);
    const { data } = await client.query({ query: gql(published), variables: { limit: 1 } });
    expect((data as { pets: unknown[] }).pets.length).toBeLessThanOrEqual(1);
    expect(wire).toEqual([{ method: useGet ? 'GET' : 'POST', query: false, hash: true, status: 200, code: undefined }]);
  });

  it('a key from API_KEYS still registers under enforce', async () => {
    const { client, wire } = apolloWithApq(server, API_KEY, false);
    const query = freshQuery('Internal');
    for (let time = 0; time < 2; time++) await client.query({ query, fetchPolicy: 'network-only' });
    expect(wire.map((sent) => sent.status)).toEqual([404, 200, 200]);
  });
});
