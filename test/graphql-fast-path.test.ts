import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { createPersistedDocumentStore } from '../src/documents/published-documents.ts';
import { buggyPets } from './support/buggy-pets.ts';
import { capturingLogger, ERROR_LEVEL, linesDuring } from './support/capturing-logger.ts';
import { useServerWithLostDatabase } from './support/lost-database.ts';
import { sampleIn } from './support/metric-sample.ts';
import { AUTH, type TestServer, useTestServer } from './support/test-server.ts';

// The fast path answers a document only once Yoga has found it valid: the first request of each
// document below goes through Yoga, the same request again through the fast path. Every answer of
// the second must be the first's: status, headers and body.

const server = useTestServer({ maxGraphQLListItems: 100 });

const PET = 'query FastPet($id: ID!) { pet(id: $id) { id name categoryId status } }';
const PETS = 'query FastPets($limit: Int) { pets(limit: $limit) { id name } }';
const BOTH = 'query FastBoth($limit: Int) { a: pets(limit: $limit) { id } b: pets(limit: $limit) { id } }';
const CREATE = 'mutation FastCreate($input: NewPet!) { createPet(input: $input) { id name categoryId status } }';
const TWO = 'query First { pets(limit: 1) { id } } query Second { pets(limit: 2) { name } }';
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** How many requests the fast path answered while this one was sent. */
  fast: number;
  requestId: string;
}

/** What two answers to the same request must share. */
const comparable = ({ status, headers, body }: Answer) => ({ status, headers, body });

/** Headers that differ between any two responses, whoever answers. */
const PER_RESPONSE = new Set(['date', 'x-request-id', 'ratelimit', 'connection', 'keep-alive']);

/** A request other than a POST of application/json: a GET of the same parameters, or another media type. */
interface Sending {
  method: 'GET' | 'POST';
  contentType: string;
  params: Record<string, unknown>;
}
const sendings = new WeakSet<object>();
const sending = (method: Sending['method'], contentType: string, params: Record<string, unknown>): Sending => {
  const made = { method, contentType, params };
  sendings.add(made);
  return made;
};
const byGet = (params: Record<string, unknown>) => sending('GET', '', params);
const sendingOf = (body: unknown): Sending =>
  sendings.has(body as object)
    ? (body as Sending)
    : { method: 'POST', contentType: 'application/json', params: body as Record<string, unknown> };

/** GraphQL-over-HTTP's GET: each parameter in the query string, variables as JSON. */
function queryStringOf(params: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return search.toString();
}

async function fastPathCount(target: TestServer): Promise<number> {
  return sampleIn(await target.metrics.scrape.text(), 'graphql_fast_path_requests_total');
}

async function send(
  target: TestServer,
  body: unknown,
  accept?: string,
  auth: Record<string, string> = AUTH,
): Promise<Answer> {
  const before = await fastPathCount(target);
  const { method, contentType, params } = sendingOf(body);
  let request =
    method === 'GET'
      ? target.request.get(`/graphql?${queryStringOf(params)}`).set(auth)
      : target.request.post('/graphql').set(auth).set('Content-Type', contentType);
  if (accept !== undefined) request = request.set('Accept', accept);
  const response = await (method === 'GET' ? request : request.send(JSON.stringify(params)));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (!PER_RESPONSE.has(name)) headers[name] = String(value);
  }
  const fast = (await fastPathCount(target)) - before;
  return {
    status: response.status,
    headers,
    body: response.body,
    fast,
    requestId: String(response.headers['x-request-id']),
  };
}

let sent = 0;
/** The same text with a comment of its own: a document this server has not seen, as each case needs. */
const unseen = (query: string) => `${query}\n# case ${++sent}`;

/** twice with a text of its own for each case. */
async function twice(
  target: TestServer,
  { query, ...rest }: { query: string } & Record<string, unknown>,
  accept?: string,
) {
  return sameTwice(target, { query: unseen(query), ...rest }, accept);
}

/** The same request twice, its document new to the server: Yoga answers the first, the fast path the second. */
async function sameTwice(target: TestServer, body: unknown, accept?: string, auth: Record<string, string> = AUTH) {
  const first = await send(target, body, accept, auth);
  const second = await send(target, body, accept, auth);
  expect(first.fast).toBe(0);
  expect(second.fast).toBe(1);
  expect(comparable(second)).toEqual(comparable(first));
  return second;
}

/** Each request once more, after a first time: the fast path leaves it to Yoga. */
async function leftToYoga(target: TestServer, body: unknown, accept?: string) {
  await send(target, body, accept);
  const again = await send(target, body, accept);
  expect(again.fast).toBe(0);
  return again;
}

async function createdPetId(): Promise<string> {
  const created = await send(server, { query: CREATE, variables: { input: { name: 'Fast', categoryId: 3 } } });
  return (created.body as { data: { createPet: { id: string } } }).data.createPet.id;
}

describe('when a document Yoga has found valid is sent again', () => {
  it('then a pet by id is answered as Yoga answers it, with each media type a client may ask for', async () => {
    const id = await createdPetId();
    const accepts = [
      undefined,
      '*/*',
      'application/json',
      GRAPHQL_RESPONSE,
      `${GRAPHQL_RESPONSE}, application/json`,
      `${GRAPHQL_RESPONSE},application/json;q=0.9`,
      'application/json, text/plain',
      // The edge's one negotiation (media-types.ts) must pick what Yoga picks.
      `text/html, ${GRAPHQL_RESPONSE}`,
      'application/*',
      GRAPHQL_RESPONSE.toUpperCase(),
      `application/json;charset=latin1, ${GRAPHQL_RESPONSE}`,
      'text/event-stream, application/json',
    ];
    for (const accept of accepts) {
      const answer = await twice(server, { query: PET, variables: { id } }, accept);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ data: { pet: { id, name: 'Fast', categoryId: 3, status: null } } });
    }
  });

  it('then a pet that does not exist, and a list, are answered as Yoga answers them', async () => {
    await createdPetId();
    expect((await twice(server, { query: PET, variables: { id: '999999999' } })).body).toEqual({
      data: { pet: null },
    });
    const list = await twice(server, { query: PETS, variables: { limit: 2 }, operationName: 'FastPets' });
    expect((list.body as { data: { pets: unknown[] } }).data.pets).toHaveLength(2);
  });

  it('then a query by GET is answered as Yoga answers it', async () => {
    const id = await createdPetId();
    const query = unseen(PET);
    const answer = await sameTwice(server, byGet({ query, variables: { id } }), GRAPHQL_RESPONSE);
    expect(answer.body).toEqual({ data: { pet: { id, name: 'Fast', categoryId: 3, status: null } } });
    expect(answer.headers.etag).toMatch(/^"[\w-]{22}"$/);
    expect(answer.headers['cache-control']).toBe('private, no-cache');
  });

  it('then a conditional GET is answered as Yoga answers it: 304 for a tag it names, 200 otherwise, none with errors', async () => {
    // No pet created here: the create test's ids keep their length.
    const variables = { limit: 2 };
    const conditional = (ifNoneMatch: string) => ({ ...AUTH, 'If-None-Match': ifNoneMatch });
    for (const accept of [undefined, GRAPHQL_RESPONSE]) {
      const tag = (await send(server, byGet({ query: PETS, variables }), accept)).headers.etag as string;
      for (const [ifNoneMatch, status] of [
        [tag, 304],
        [`"other", W/${tag}`, 304],
        ['*', 304],
        ['"other"', 200],
      ] as const) {
        const params = { query: unseen(PETS), variables };
        const answer = await sameTwice(server, byGet(params), accept, conditional(ifNoneMatch));
        expect(answer.status, ifNoneMatch).toBe(status);
        expect(answer.headers.etag, ifNoneMatch).toBe(status === 304 ? tag : answer.headers.etag);
      }
    }
    const failing = await sameTwice(
      server,
      byGet({ query: unseen(PET), variables: { id: '-1' } }),
      undefined,
      conditional('*'),
    );
    expect(failing.status).toBe(200);
    expect(failing.headers.etag).toBeUndefined();
    expect(failing.headers['cache-control']).toBe('no-store');
  });

  it('then each content type Yoga reads as JSON is answered as Yoga answers it (isContentTypeMatch)', async () => {
    const id = await createdPetId();
    for (const contentType of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/graphql+json',
      'application/json, text/plain',
    ]) {
      const answer = await sameTwice(server, sending('POST', contentType, { query: unseen(PET), variables: { id } }));
      expect(answer.body).toEqual({ data: { pet: { id, name: 'Fast', categoryId: 3, status: null } } });
    }
  });

  it('then a GET with empty parameters reads them as absent, as Yoga does (handleURLSearchParams)', async () => {
    await createdPetId();
    const answer = await sameTwice(
      server,
      byGet({ query: unseen(PETS), variables: '', operationName: '', extensions: '' }),
      GRAPHQL_RESPONSE,
    );
    expect((answer.body as { data: { pets: unknown[] } }).data.pets.length).toBeGreaterThan(0);
  });

  it('then each operation of a document with several runs by its name', async () => {
    await createdPetId();
    await createdPetId();
    expect((await twice(server, { query: TWO, operationName: 'First' })).body).toMatchObject({
      data: { pets: [{ id: expect.any(String) }] },
    });
    expect((await twice(server, { query: TWO, operationName: 'Second' })).body).toMatchObject({
      data: { pets: [{ name: expect.any(String) }, { name: expect.any(String) }] },
    });
  });

  it('then a create stores a pet each time and answers in the same shape', async () => {
    const body = { query: CREATE, variables: { input: { name: 'Twice', categoryId: 4, status: 'AVAILABLE' } } };
    const first = await send(server, body);
    const second = await send(server, body);
    expect(second.fast).toBe(1);
    const idOf = (answer: Answer) => (answer.body as { data: { createPet: { id: string } } }).data.createPet.id;
    expect(idOf(second)).not.toBe(idOf(first));
    // Ids differ, and so may their digit counts: the length goes with the id.
    const withoutId = (answer: Answer) => {
      const { 'content-length': _length, ...headers } = answer.headers;
      return { ...comparable(answer), headers, body: JSON.stringify(answer.body).replace(/"id":"\d+"/, '') };
    };
    expect(withoutId(second)).toEqual(withoutId(first));
  });

  it.each([
    ['application/json', 200],
    [GRAPHQL_RESPONSE, 400],
  ])('then a variable the type refuses is BAD_USER_INPUT as from Yoga (%s: %i)', async (accept, status) => {
    const answer = await twice(server, { query: PET, variables: {} }, accept);
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT', field: 'id' } }] });
  });

  it.each([
    ['application/json', 200],
    [GRAPHQL_RESPONSE, 400],
  ])(
    'then a list past the size limit, and a limit the rule refuses, are refused as by Yoga (%s: %i)',
    async (accept, status) => {
      const tooLarge = await twice(server, { query: BOTH, variables: { limit: 60 } }, accept);
      expect(tooLarge.status).toBe(status);
      expect(tooLarge.body).toMatchObject({ errors: [{ extensions: { code: 'QUERY_TOO_LARGE' } }] });
      const refused = await twice(server, { query: PETS, variables: { limit: 0 } }, accept);
      expect(refused.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] });
    },
  );
});

describe('when the fast path cannot answer a request as Yoga would', () => {
  it('then Yoga answers it: streams, odd variables or parameters, extensions, ids, unknown operations', async () => {
    const refusals = [
      [{ query: PET, variables: { id: '1' } }, 'text/event-stream'],
      [{ query: PET, variables: { id: '1' } }, 'multipart/mixed'],
      [{ query: PET, variables: '{"id":"1"}' }],
      [{ query: PET, variables: ['1'] }],
      [{ query: PET, variables: { id: '1' }, surprise: true }],
      [{ query: PET, variables: { id: '1' }, extensions: { something: 1 } }],
      [{ query: TWO }],
      [{ query: TWO, operationName: 'Third' }],
      [{ query: PET, variables: { id: '1' }, operationName: 7 }],
      [{ query: 'query Broken { pet(id: "1") { nope } }' }],
      // Yoga does not read these bodies as JSON.
      [sending('POST', 'application/vnd.petstore+json', { query: PET, variables: { id: '1' } })],
      // A mutation by GET: Yoga's 405.
      [byGet({ query: CREATE, variables: { input: { name: 'Never', categoryId: 1 } } })],
      [byGet({ query: PET, variables: '{not json' })],
      // Yoga's parsers differ: a GraphQL body, a form, a media type compared by its exact text.
      [sending('POST', 'application/graphql', { query: PET })],
      [sending('POST', 'Application/JSON', { query: PET, variables: { id: '1' } })],
      [sending('POST', 'text/plain, application/json', { query: PET, variables: { id: '1' } })],
    ] as const;
    for (const [body, accept] of refusals) await leftToYoga(server, body, accept);
  });
});

describe('when a resolver fails on the fast path', () => {
  const broken = useServerWithLostDatabase();

  it('then the client gets the masked 503 that Yoga gives', async () => {
    const answer = await twice(broken(), { query: PETS, variables: { limit: 1 } }, GRAPHQL_RESPONSE);
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ errors: [{ extensions: { code: 'SERVICE_UNAVAILABLE' } }] });
    expect(JSON.stringify(answer.body)).not.toMatch(/stack|originalError|mongo|topology/i);
  });
});

describe('when a resolver has a bug on the fast path', () => {
  const BUG = 'a bug in the repository';
  const { logger, lines } = capturingLogger();
  const withBug = useTestServer({ logger, wrapStores: (stores) => ({ ...stores, pets: buggyPets(BUG) }) });

  it('then it is masked as Yoga masks it and logged once, with the request id', async () => {
    const body = { query: PET, variables: { id: '1' } };
    await send(withBug, body);
    const { response: answer, logged } = await linesDuring(lines, async () => {
      const sent = await send(withBug, body);
      return { ...sent, headers: { 'x-request-id': sent.requestId } };
    });
    expect(answer.fast).toBe(1);
    expect(answer.body).toMatchObject({
      data: { pet: null },
      errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
    });
    const errors = logged.filter((line) => line.level >= ERROR_LEVEL);
    expect(errors).toHaveLength(1);
    expect(JSON.stringify(errors[0])).toContain(BUG);
  });
});

describe('when a client key runs published documents by id under TRUSTED_DOCUMENTS=enforce', () => {
  const strict = useTestServer({ trustedDocuments: 'enforce' });
  const idOf = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
  const BY_ID = `${PET}\n# published`;
  const CREATE_BY_ID = `${CREATE}\n# published`;
  const BY_ID_FOR_GET = `${PET}\n# published for GET`;
  const FIRST_READ = '{ __typename }';
  let client: Record<string, string> = AUTH;

  beforeAll(async () => {
    const operations = [{ name: null, type: 'query' as const }];
    await createPersistedDocumentStore(strict.database.db).publish(
      [BY_ID, CREATE_BY_ID, BY_ID_FOR_GET, FIRST_READ].map((document) => ({
        id: idOf(document),
        document,
        operations,
      })),
    );
    const issued = await createApiKeyStore(strict.database.db).issue({ name: 'client' });
    client = { Authorization: `Bearer ${issued.key}` };
    // The key and the ids are read every 2 s: wait for both, with a document of its own.
    const accepted = async () => (await send(strict, { documentId: idOf(FIRST_READ) }, undefined, client)).status;
    await vi.waitFor(async () => expect(await accepted()).toBe(200), { timeout: 10_000, interval: 100 });
  });

  it('then a query by id is answered as Yoga answers it, and counted by its id', async () => {
    const runs = async () =>
      sampleIn(await strict.metrics.scrape.text(), 'graphql_operations_total', { document: idOf(BY_ID) });
    const before = await runs();
    const answer = await sameTwice(
      strict,
      { documentId: idOf(BY_ID), variables: { id: '1' } },
      GRAPHQL_RESPONSE,
      client,
    );
    expect(answer.status).toBe(200);
    expect(await runs()).toBe(before + 2);
  });

  it('then a query by id over GET, as the example client sends it, is answered as Yoga answers it', async () => {
    const answer = await sameTwice(
      strict,
      byGet({ documentId: idOf(BY_ID_FOR_GET), variables: { id: '2' } }),
      undefined,
      client,
    );
    expect(answer.status).toBe(200);
  });

  it('then a create by id stores a pet each time and answers in the same shape', async () => {
    const body = { documentId: idOf(CREATE_BY_ID), variables: { input: { name: 'ById', categoryId: 5 } } };
    const first = await send(strict, body, GRAPHQL_RESPONSE, client);
    const second = await send(strict, body, GRAPHQL_RESPONSE, client);
    expect([first.fast, second.fast]).toEqual([0, 1]);
    // Ids differ, and so may their digit counts: the length goes with the id.
    const withoutId = (answer: Answer) => {
      const { 'content-length': _length, ...headers } = answer.headers;
      return { ...comparable(answer), headers, body: JSON.stringify(answer.body).replace(/"id":"\d+"/, '') };
    };
    expect(withoutId(second)).toEqual(withoutId(first));
    expect(first.body).toMatchObject({ data: { createPet: { name: 'ById', categoryId: 5 } } });
  });

  it('then the same text sent whole by that key is still refused, fast path or not', async () => {
    const refused = await send(strict, { query: BY_ID, variables: { id: '1' } }, GRAPHQL_RESPONSE, client);
    expect(refused.fast).toBe(0);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ errors: [{ extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED' } }] });
  });
});

describe('when a key that may not send documents whole sends one under TRUSTED_DOCUMENTS=log', () => {
  const logging = useTestServer({ trustedDocuments: 'log' });

  it('then Yoga answers it every time, so the gate counts each run the way enforce would refuse', async () => {
    const issued = await createApiKeyStore(logging.database.db).issue({ name: 'logged client' });
    const client = { Authorization: `Bearer ${issued.key}` };
    const body = { query: unseen(PET), variables: { id: '1' } };
    // The key is read every 2 s: wait until it is accepted.
    await vi.waitFor(async () => expect((await send(logging, body, undefined, client)).status).toBe(200), {
      timeout: 10_000,
      interval: 100,
    });
    const untrusted = async () =>
      sampleIn(await logging.metrics.scrape.text(), 'graphql_untrusted_operations_total', { operation: 'FastPet' });
    const before = await untrusted();
    const [first, second] = [
      await send(logging, body, undefined, client),
      await send(logging, body, undefined, client),
    ];
    expect([first.fast, second.fast]).toEqual([0, 0]);
    expect(comparable(second)).toEqual(comparable(first));
    expect(await untrusted()).toBe(before + 2);
    // The same text from a key allowed to send documents: the fast path answers its repeat.
    expect((await send(logging, body)).fast).toBe(1);
  });
});
