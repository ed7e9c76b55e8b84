import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { createPersistedDocumentStore } from '../src/documents/published-documents.ts';
import type { Stores } from '../src/stores.ts';
import { capturingLogger, linesDuring } from './support/capturing-logger.ts';
import { sampleIn } from './support/metric-sample.ts';
import { AUTH, startTestServer, type TestServer } from './support/test-server.ts';

const LIST = 'query TrustedList($limit: Int) { pets(limit: $limit) { id name } }';
const CREATE = 'mutation TrustedCreate($input: NewPet!) { createPet(input: $input) { id name } }';
const UNPUBLISHED = 'query NotPublished { pets(limit: 1) { id } }';

const idOf = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
const hexOf = (text: string) => idOf(text).slice('sha256:'.length);
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/** Stores a document as `npm run documents -- publish` does (the command has its own tests). */
async function publish(server: TestServer, ...texts: string[]) {
  const operations = [{ name: null, type: 'query' as const }];
  return createPersistedDocumentStore(server.database.db).publish(
    texts.map((document) => ({ id: idOf(document), document, operations })),
  );
}

/** An issued key as `npm run keys -- create` makes it, once this instance accepts it. */
async function issueKey(server: TestServer, allowArbitraryDocuments = false): Promise<Record<string, string>> {
  const issued = await createApiKeyStore(server.database.db).issue({ name: 'client', allowArbitraryDocuments });
  const auth = { Authorization: `Bearer ${issued.key}` };
  await vi.waitFor(async () => expect((await server.request.get('/v1/pets').set(auth)).status).toBe(200), {
    timeout: 10_000,
    interval: 100,
  });
  return auth;
}

async function petCount(server: TestServer): Promise<number> {
  return server.database.db.collection('pets').countDocuments();
}

async function scrape(server: TestServer): Promise<string> {
  return (await server.request.get('/metrics').set(AUTH)).text;
}

function errorOf(body: { errors?: { extensions?: { code?: string } }[]; data?: unknown }) {
  expect(body.errors, JSON.stringify(body)).toHaveLength(1);
  return body.errors?.[0]?.extensions?.code;
}

describe('TRUSTED_DOCUMENTS=enforce', () => {
  let server: TestServer;
  let client: Record<string, string>;
  let finds = 0;
  /** Counts the reads of one document's text, to show unknown ids never reach the database. */
  const countingFinds = (stores: Stores): Stores => ({
    ...stores,
    persistedDocuments: {
      ids: () => stores.persistedDocuments.ids(),
      find: (id) => {
        finds++;
        return stores.persistedDocuments.find(id);
      },
    },
  });

  beforeAll(async () => {
    server = await startTestServer({ trustedDocuments: 'enforce', wrapStores: countingFinds });
    await publish(server, LIST, CREATE);
    client = await issueKey(server);
    // Published before the key was accepted; the ids are read every 2 s like the keys.
    await vi.waitFor(
      async () => {
        const response = await server.request
          .post('/graphql')
          .set(client)
          .send({ documentId: idOf(LIST) });
        expect(response.body.errors).toBeUndefined();
      },
      { timeout: 10_000, interval: 100 },
    );
  });
  afterAll(() => server.close());

  it("refuses a client key's free query before running it: 403 with graphql-response+json, 200 with application/json", async () => {
    const strict = await server.request
      .post('/graphql')
      .set({ ...client, Accept: GRAPHQL_RESPONSE })
      .send({ query: LIST });
    expect(strict.status).toBe(403);
    expect(errorOf(strict.body)).toBe('PERSISTED_QUERY_ID_REQUIRED');
    expect(strict.body.data).toBeUndefined();

    const legacy = await server.request.post('/graphql').set(client).send({ query: LIST });
    expect(legacy.status).toBe(200);
    expect(errorOf(legacy.body)).toBe('PERSISTED_QUERY_ID_REQUIRED');
    // Even the text of a published document: the key has to send its id.
    const byGet = await server.request.get('/graphql').query({ query: LIST }).set(client);
    expect(errorOf(byGet.body)).toBe('PERSISTED_QUERY_ID_REQUIRED');
  });

  it("refuses a client key's free mutation and stores nothing", async () => {
    const before = await petCount(server);
    const response = await server.request
      .post('/graphql')
      .set({ ...client, Accept: GRAPHQL_RESPONSE })
      .send({ query: CREATE, variables: { input: { name: 'Free', categoryId: 1 } } });
    expect(response.status).toBe(403);
    expect(errorOf(response.body)).toBe('PERSISTED_QUERY_ID_REQUIRED');
    expect(await petCount(server)).toBe(before);
  });

  it('runs a published query by documentId on POST and on GET', async () => {
    await server.request
      .post('/graphql')
      .set(AUTH)
      .send({ query: CREATE, variables: { input: { name: 'Listed', categoryId: 2 } } })
      .expect(200);
    const post = await server.request
      .post('/graphql')
      .set({ ...client, Accept: GRAPHQL_RESPONSE })
      .send({ documentId: idOf(LIST), variables: { limit: 100 } });
    expect(post.status).toBe(200);
    expect(post.body.errors).toBeUndefined();
    expect(post.body.data.pets.map((pet: { name: string }) => pet.name)).toContain('Listed');

    const get = await server.request
      .get('/graphql')
      .query({ documentId: idOf(LIST), variables: JSON.stringify({ limit: 100 }) })
      .set({ ...client, Accept: GRAPHQL_RESPONSE });
    expect(get.status).toBe(200);
    expect(get.body).toEqual(post.body);
  });

  it("runs a published query by Apollo's persistedQuery extension on POST and on GET", async () => {
    const extensions = { persistedQuery: { version: 1, sha256Hash: hexOf(LIST) } };
    const post = await server.request
      .post('/graphql')
      .set(client)
      .send({ extensions, variables: { limit: 1 } });
    expect(post.status).toBe(200);
    expect(post.body.data.pets).toHaveLength(1);
    const get = await server.request
      .get('/graphql')
      .query({ extensions: JSON.stringify(extensions), variables: JSON.stringify({ limit: 1 }) })
      .set(client);
    expect(get.status).toBe(200);
    expect(get.body).toEqual(post.body);
  });

  it('runs a published mutation by POST, and refuses it by GET (405) without storing anything', async () => {
    const before = await petCount(server);
    const variables = { input: { name: 'ById', categoryId: 3 } };
    const post = await server.request
      .post('/graphql')
      .set(client)
      .send({ documentId: idOf(CREATE), variables });
    expect(post.status).toBe(200);
    expect(post.body.data.createPet.name).toBe('ById');
    expect(await petCount(server)).toBe(before + 1);

    const get = await server.request
      .get('/graphql')
      .query({ documentId: idOf(CREATE), variables: JSON.stringify(variables) })
      .set({ ...client, Accept: GRAPHQL_RESPONSE });
    expect(get.status).toBe(405);
    expect(await petCount(server)).toBe(before + 1);
  });

  it('refuses an unknown id (400 PERSISTED_QUERY_NOT_IN_LIST) whoever sends it, and a malformed one alike', async () => {
    for (const auth of [client, AUTH]) {
      for (const documentId of [idOf(UNPUBLISHED), 'sha256:abc', 'x-custom:1', hexOf(UNPUBLISHED)]) {
        const response = await server.request
          .post('/graphql')
          .set({ ...auth, Accept: GRAPHQL_RESPONSE })
          .send({ documentId });
        expect(response.status, documentId).toBe(400);
        expect(errorOf(response.body)).toBe('PERSISTED_QUERY_NOT_IN_LIST');
      }
    }
    const notString = await server.request.post('/graphql').set(client).send({ documentId: 42 });
    expect(notString.status).toBe(400);
    expect(errorOf(notString.body)).toBe('BAD_REQUEST');
  });

  it('refuses a document sent with an id, and runs neither', async () => {
    const before = await petCount(server);
    const variables = { input: { name: 'Both', categoryId: 4 } };
    // A documentId with a query, from any key; Apollo's extension with a query, from a key that may
    // not register (a key that may is registering by APQ: test/automatic-persisted-queries.test.ts).
    for (const [auth, body] of [
      [AUTH, { query: CREATE, documentId: idOf(CREATE), variables }],
      [client, { query: CREATE, extensions: { persistedQuery: { version: 1, sha256Hash: hexOf(CREATE) } }, variables }],
    ] as const) {
      const response = await server.request.post('/graphql').set(auth).send(body);
      expect(response.status).toBe(200);
      expect(errorOf(response.body)).toBe('CANNOT_SEND_PQ_ID_AND_BODY');
    }
    expect(await petCount(server)).toBe(before);
  });

  it("answers Apollo's hash alone as not in the list for a limited key, as not found (404) for a key that may register", async () => {
    const extensions = { persistedQuery: { version: 1, sha256Hash: hexOf(UNPUBLISHED) } };
    const limited = await server.request.post('/graphql').set(client).send({ extensions });
    expect(limited.status).toBe(200);
    expect(errorOf(limited.body)).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    const internal = await server.request.post('/graphql').set(AUTH).send({ extensions });
    expect(internal.status).toBe(404);
    expect(errorOf(internal.body)).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('asks for a query or an id when a request has neither', async () => {
    const response = await server.request
      .post('/graphql')
      .set({ ...client, Accept: GRAPHQL_RESPONSE })
      .send({ variables: {} });
    expect(response.status).toBe(400);
    expect(errorOf(response.body)).toBe('BAD_REQUEST');
  });

  it('lets API_KEYS keys and keys issued with --allow-arbitrary-documents send free queries', async () => {
    const internal = await issueKey(server, true);
    for (const auth of [AUTH, internal]) {
      const response = await server.request.post('/graphql').set(auth).send({ query: UNPUBLISHED });
      expect(response.status).toBe(200);
      expect(response.body.errors).toBeUndefined();
    }
  });

  it('answers the client key on REST as before', async () => {
    const created = await server.request.post('/v1/pets').set(client).send({ name: 'Rest', categoryId: 5 });
    expect(created.status).toBe(201);
    const listed = await server.request.get('/v1/pets').query({ limit: 100 }).set(client);
    expect(listed.status).toBe(200);
    expect(listed.body.map((pet: { name: string }) => pet.name)).toContain('Rest');
  });

  it('reads a known id once per instance and never reads for unknown ids', async () => {
    const before = finds;
    for (let i = 0; i < 50; i++) {
      await server.request
        .post('/graphql')
        .set(client)
        .send({ documentId: `sha256:${randomBytes(32).toString('hex')}` });
      await server.request
        .post('/graphql')
        .set(client)
        .send({ documentId: idOf(LIST) });
    }
    expect(finds - before).toBe(0);
  });

  it('serves a document published while running within 5 s, and stops within 5 s of its removal', async () => {
    const text = `query Fresh${randomBytes(4).toString('hex')} { pets(limit: 1) { id } }`;
    const send = () =>
      server.request
        .post('/graphql')
        .set(client)
        .send({ documentId: idOf(text) });
    expect(errorOf((await send()).body)).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    let startedAt = performance.now();
    await publish(server, text);
    await expect.poll(async () => (await send()).body.errors, { timeout: 5_000, interval: 50 }).toBeUndefined();
    const servedAfterMs = performance.now() - startedAt;

    startedAt = performance.now();
    expect(await createPersistedDocumentStore(server.database.db).remove(idOf(text))).toBe(true);
    await expect
      .poll(async () => errorOf((await send()).body), { timeout: 5_000, interval: 50 })
      .toBe('PERSISTED_QUERY_NOT_IN_LIST');
    const refusedAfterMs = performance.now() - startedAt;
    console.info(
      `published: served after ${servedAfterMs.toFixed(0)} ms; removed: refused after ${refusedAfterMs.toFixed(0)} ms`,
    );
  });

  it('counts operations by document id and refusals by reason', async () => {
    const text = await scrape(server);
    const byId = { operation: 'TrustedList', type: 'query', outcome: 'success', document: idOf(LIST) };
    expect(sampleIn(text, 'graphql_operations_total', byId)).toBeGreaterThan(0);
    expect(sampleIn(text, 'graphql_documents_refused_total', { reason: 'id_required' })).toBeGreaterThanOrEqual(4);
    expect(sampleIn(text, 'graphql_documents_refused_total', { reason: 'not_in_list' })).toBeGreaterThanOrEqual(59);
    expect(sampleIn(text, 'graphql_documents_refused_total', { reason: 'document_and_id' })).toBe(2);
    expect(sampleIn(text, 'graphql_untrusted_operations_total')).toBe(0);
  });
});

describe('TRUSTED_DOCUMENTS=log', () => {
  let server: TestServer;
  let client: Record<string, string>;
  const { logger, lines } = capturingLogger();

  beforeAll(async () => {
    server = await startTestServer({ trustedDocuments: 'log', logger });
    await publish(server, LIST);
    client = await issueKey(server);
  });
  afterAll(() => server.close());

  it('refuses nothing, and counts and logs (once per operation name) what enforce would refuse', async () => {
    for (let i = 0; i < 3; i++) {
      for (const query of [UNPUBLISHED, LIST]) {
        const response = await server.request
          .post('/graphql')
          .set(client)
          .send({ query, variables: { limit: 1 } });
        expect(response.status).toBe(200);
        expect(response.body.errors).toBeUndefined();
      }
    }
    // API_KEYS keys may send documents: nothing to report about them.
    await server.request.post('/graphql').set(AUTH).send({ query: UNPUBLISHED }).expect(200);

    const text = await scrape(server);
    expect(sampleIn(text, 'graphql_untrusted_operations_total', { operation: 'NotPublished', type: 'query' })).toBe(3);
    expect(sampleIn(text, 'graphql_untrusted_operations_total', { operation: 'TrustedList', type: 'query' })).toBe(3);
    expect(text).not.toMatch(/^graphql_documents_refused_total\{/m);

    const reported = lines.filter((line) => typeof line.msg === 'string' && line.msg.includes('would refuse'));
    expect(reported.map((line) => [line.operation, line.published])).toEqual([
      ['NotPublished', false],
      ['TrustedList', true],
    ]);
    expect(reported.every((line) => line.keyId !== undefined && line.keyId !== '')).toBe(true);
  });

  it("lets a limited key register by Apollo's APQ, counting what it runs as enforce would refuse it", async () => {
    const text = 'query ApqUnderLog { pets(limit: 1) { id } }';
    const extensions = { persistedQuery: { version: 1, sha256Hash: hexOf(text) } };
    const unknown = await server.request.post('/graphql').set(client).send({ extensions });
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown.body)).toBe('PERSISTED_QUERY_NOT_FOUND');
    for (const body of [{ query: text, extensions }, { extensions }]) {
      const response = await server.request.post('/graphql').set(client).send(body);
      expect(response.status).toBe(200);
      expect(response.body.errors).toBeUndefined();
    }
    const counted = { operation: 'ApqUnderLog', type: 'query' };
    expect(sampleIn(await scrape(server), 'graphql_untrusted_operations_total', counted)).toBe(2);
    const warned = lines.filter((line) => line.operation === 'ApqUnderLog' && line.level === 40);
    expect(warned).toHaveLength(1);
  });

  it("names the document a POST ran by id in the request's access-log line", async () => {
    await vi.waitFor(
      async () => {
        const { response, logged, requestId } = await linesDuring(lines, () =>
          server.request
            .post('/graphql')
            .set(client)
            .send({ documentId: idOf(LIST) }),
        );
        expect(response.body.errors).toBeUndefined();
        const accessLine = logged.find((line) => line.reqId === requestId && line.msg === 'request');
        expect(accessLine?.documentId).toBe(idOf(LIST));
      },
      { timeout: 10_000, interval: 200 },
    );
  });
});

describe('TRUSTED_DOCUMENTS=off (the default)', () => {
  let server: TestServer;
  let client: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer();
    await publish(server, LIST);
    client = await issueKey(server);
  });
  afterAll(() => server.close());

  it('lets every key send documents, counts none as untrusted, and still serves published ids', async () => {
    const free = await server.request.post('/graphql').set(client).send({ query: UNPUBLISHED });
    expect(free.body.errors).toBeUndefined();
    await expect
      .poll(
        async () =>
          (
            await server.request
              .post('/graphql')
              .set(client)
              .send({ documentId: idOf(LIST) })
          ).status,
      )
      .toBe(200);
    expect(sampleIn(await scrape(server), 'graphql_untrusted_operations_total')).toBe(0);
  });
});
