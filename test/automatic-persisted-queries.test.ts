import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { APQ_LIMITS } from '../src/graphql/automatic-persisted-queries.ts';
import { QUERY_LIMITS } from '../src/graphql/query-limits.ts';
import { capturingLogger, ERROR_LEVEL, linesDuring } from './support/capturing-logger.ts';
import { fragmentChain, repeated } from './support/hostile-documents.ts';
import { AUTH, type TestServer, useTestServer } from './support/test-server.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const apq = (text: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(text) } });
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

interface Answer {
  status: number;
  body: { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] };
  headers: Record<string, string | undefined>;
}

/** Apollo's two kinds of request, by POST or GET: the hash alone, or the text with its hash. */
function sender(server: TestServer, auth: Record<string, string> = AUTH) {
  const post = (body: Record<string, unknown>, accept = GRAPHQL_RESPONSE): Promise<Answer> =>
    server.request
      .post('/graphql')
      .set({ ...auth, Accept: accept })
      .send(body);
  const get = (params: Record<string, unknown>): Promise<Answer> =>
    server.request
      .get('/graphql')
      .query(Object.fromEntries(Object.entries(params).map(([name, value]) => [name, JSON.stringify(value)])))
      .set({ ...auth, Accept: GRAPHQL_RESPONSE });
  return {
    register: (text: string, extensions = apq(text), variables = {}) => post({ query: text, extensions, variables }),
    byHash: (text: string, variables = {}) => post({ extensions: apq(text), variables }),
    post,
    getByHash: (text: string) => get({ extensions: apq(text) }),
    getText: (text: string) =>
      server.request
        .get('/graphql')
        .query({ query: text, extensions: JSON.stringify(apq(text)) })
        .set(AUTH) as Promise<Answer>,
  };
}

const codeOf = (answer: Answer) => answer.body.errors?.[0]?.extensions?.code;
const fresh = (name: string) => `query ${name}${randomBytes(4).toString('hex')} { pets(limit: 1) { id } }`;
const storedNamed = (server: TestServer, name: string) =>
  server.database.db.collection('pets').countDocuments({ name });

describe('automatic persisted queries against hostile clients', () => {
  const server = useTestServer();
  const send = sender(server);

  it('a text with a hash that is not its own: a clear 400, nothing runs, nothing is kept', async () => {
    const text = 'mutation { createPet(input: { name: "Mismatched", categoryId: 1 }) { id } }';
    const lying = { persistedQuery: { version: 1, sha256Hash: sha256('{ __typename }') } };
    for (const accept of [GRAPHQL_RESPONSE, 'application/json']) {
      const answer = await send.post({ query: text, extensions: lying }, accept);
      expect(answer.status).toBe(400);
      expect(codeOf(answer)).toBe('PERSISTED_QUERY_MISMATCH');
      expect(answer.body.errors?.[0]?.message).toMatch(/is not the SHA-256 of this "query"/);
      expect(answer.body.data).toBeUndefined();
    }
    const byGet = await server.request
      .get('/graphql')
      .query({ query: fresh('Lied'), extensions: JSON.stringify(lying) })
      .set(AUTH);
    expect(byGet.status).toBe(400);
    expect(codeOf(byGet)).toBe('PERSISTED_QUERY_MISMATCH');
    expect(await storedNamed(server, 'Mismatched')).toBe(0);
    expect(codeOf(await send.post({ extensions: lying }))).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(codeOf(await send.byHash(text))).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('a text by GET with its hash is registered like one by POST', async () => {
    const text = fresh('ByGet');
    expect((await send.getByHash(text)).status).toBe(404);
    const registered = await send.getText(text);
    expect(registered.status).toBe(200);
    expect(registered.body.errors).toBeUndefined();
    const served = await send.getByHash(text);
    expect(served.status).toBe(200);
    expect(served.body).toEqual(registered.body);
  });

  it(`a text over ${APQ_LIMITS.characters} characters runs but is never kept; one at the limit is`, async () => {
    const body = fresh('Sized');
    const padded = (length: number) => `${body} #${'x'.repeat(length - body.length - 2)}`;
    const over = padded(APQ_LIMITS.characters + 1);
    const atLimit = padded(APQ_LIMITS.characters);
    expect([over.length, atLimit.length]).toEqual([APQ_LIMITS.characters + 1, APQ_LIMITS.characters]);

    const ran = await send.register(over);
    expect(ran.status).toBe(200);
    expect(ran.body.errors).toBeUndefined();
    const notKept = await send.byHash(over);
    expect(notKept.status).toBe(404);
    expect(codeOf(notKept)).toBe('PERSISTED_QUERY_NOT_FOUND');

    expect((await send.register(atLimit)).status).toBe(200);
    expect((await send.byHash(atLimit)).body).toEqual(ran.body);
  });

  it(`keeps at most ${APQ_LIMITS.texts} texts: past that, the least recently used go`, async () => {
    const texts = Array.from({ length: APQ_LIMITS.texts + 20 }, (_, index) => `query Filler${index} { __typename }`);
    const first = texts[0] as string;
    const last = texts.at(-1) as string;
    // Registered in order, a few at a time.
    for (let start = 0; start < texts.length; start += 10) {
      const batch = texts.slice(start, start + 10);
      const answers = await Promise.all(batch.map((text) => send.register(text)));
      for (const answer of answers) expect(answer.status).toBe(200);
      // Used again just before the store is full, the first stays while the next ones go.
      if (start === APQ_LIMITS.texts - 10) expect((await send.byHash(first)).status).toBe(200);
    }
    expect((await send.byHash(first)).status).toBe(200);
    for (const evicted of texts.slice(1, 20))
      expect(codeOf(await send.byHash(evicted))).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await send.byHash(last)).body).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('automatic persisted queries with parameters of the wrong shape', () => {
  const { logger, lines } = capturingLogger();
  const server = useTestServer({ logger });
  const send = sender(server);

  /** The answer to `body`, checked to be a 400 with `message`, logged below the error level. */
  async function refused(body: Record<string, unknown>, message: RegExp) {
    const { response, logged } = await linesDuring(lines, () => send.post(body));
    expect(response.status, JSON.stringify(body)).toBe(400);
    expect(response.body.errors?.[0]?.message).toMatch(message);
    expect(response.body.data).toBeUndefined();
    expect(logged.filter((line) => line.level >= ERROR_LEVEL)).toEqual([]);
    return response;
  }

  it('a "query" that is not a string gets the 400 Yoga gives it without the extension, and is never hashed', async () => {
    const text = fresh('NotAString');
    const extensions = apq(text);
    for (const query of [1, 0, true, false, {}, { query: text }, [], [text]]) {
      // Falsy ones (0, false) read as no query at all to the persisted-operations library: still a 400.
      const message = /Expected "query" param to be a string, but given|Send a GraphQL document as "query"/;
      const withHash = await refused({ query, extensions }, message);
      const without = await send.post({ query });
      expect(without.status).toBe(400);
      expect(withHash.body).toEqual(without.body);
    }
    // Nothing was registered under the hash, and the text itself still registers.
    expect(codeOf(await send.byHash(text))).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await send.register(text)).status).toBe(200);
    expect((await send.byHash(text)).status).toBe(200);
  });

  it('a null "query" is an absent one: the hash alone is looked up', async () => {
    const answer = await send.post({ query: null, extensions: apq(fresh('NullQuery')) });
    expect(answer.status).toBe(404);
    expect(codeOf(answer)).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it("an extension not of Apollo's shape is refused with a 400, with or without a text, and nothing is kept", async () => {
    const text = fresh('BadExtension');
    const hash = sha256(text);
    const shapes = [
      ...[1, 'x', true, [], [hash]].map((persistedQuery) => ({ persistedQuery })),
      ...[2, 0, '1', null, undefined].map((version) => ({ persistedQuery: { version, sha256Hash: hash } })),
      ...[1, null, undefined, {}, [hash], true].map((sha256Hash) => ({ persistedQuery: { version: 1, sha256Hash } })),
    ];
    for (const extensions of shapes) {
      const message = /extensions\.persistedQuery must be \{ "version": 1, "sha256Hash"/;
      expect(codeOf(await refused({ query: text, extensions }, message))).toBe('BAD_REQUEST');
      expect(codeOf(await refused({ extensions }, message))).toBe('BAD_REQUEST');
    }
    expect(codeOf(await send.byHash(text))).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('a registered text meets every rule the same text sent whole meets', () => {
  const server = useTestServer();
  const send = sender(server);

  it('the query limits: refused alike when registered as when sent whole, and never kept', async () => {
    const aliases = Array.from({ length: QUERY_LIMITS.aliases + 1 }, (_, index) => `a${index}: pets(limit: 1) { id }`);
    const text = `query TooMany { ${aliases.join(' ')} }`;
    const whole = await send.post({ query: text });
    expect(codeOf(whole)).toBe('TOO_MANY_ALIASES');
    const registered = await send.register(text);
    expect(registered.status).toBe(whole.status);
    expect(registered.body).toEqual(whole.body);
    expect(codeOf(await send.byHash(text))).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('the scopes: a read-only key running a mutation another key registered gets 403 and stores nothing', async () => {
    const { key } = await createApiKeyStore(server.database.db).issue({
      name: 'reader',
      scopes: ['pets:read'],
      allowArbitraryDocuments: true,
    });
    const reader = sender(server, { Authorization: `Bearer ${key}` });
    const text = 'mutation { createPet(input: { name: "Registered", categoryId: 1 }) { id } }';
    expect((await send.register(text)).status).toBe(200);
    expect(await storedNamed(server, 'Registered')).toBe(1);
    // Keys are read every 2 s.
    await vi.waitFor(async () => expect(codeOf(await reader.byHash(text))).toBe('FORBIDDEN'), {
      timeout: 10_000,
      interval: 200,
    });
    const whole = await reader.post({ query: text });
    const byHash = await reader.byHash(text);
    expect(byHash.status).toBe(403);
    expect(byHash.body).toEqual(whole.body);
    expect(await storedNamed(server, 'Registered')).toBe(1);
  });
});

describe('a registered text costs the points the same text sent whole costs', () => {
  const server = useTestServer({
    rateLimits: { perKey: { rate: 100, burst: 200 }, authFailures: { rate: 0, burst: 0 } },
  });
  const send = sender(server);
  const remaining = (answer: Answer) => Number(/;r=(\d+);/.exec(answer.headers.ratelimit ?? '')?.[1]);

  /** The drop in RateLimit's remaining points that `request` caused, after one cheap request. */
  async function pointsSpentBy(request: () => Promise<Answer>) {
    const before = remaining(await send.post({ query: '{ __typename }' }));
    const answer = await request();
    expect(answer.status).toBe(200);
    const after = remaining(answer);
    // The one-second window may have turned between the two: then it starts from the full quota.
    return after < before ? before - after : 100 - after;
  }

  it('15 aliased lists cost 15 points sent whole, registered, and by hash', async () => {
    const lists = Array.from({ length: QUERY_LIMITS.aliases }, (_, index) => `l${index}: pets(limit: 31) { id }`);
    const text = `query Fifteen { ${lists.join(' ')} }`;
    expect(await pointsSpentBy(() => send.post({ query: text }))).toBe(15);
    expect(await pointsSpentBy(() => send.register(text))).toBe(15);
    expect(await pointsSpentBy(() => send.byHash(text))).toBe(15);
  });

  describe('a registered text refused for its price is not kept', () => {
    const server = useTestServer({
      rateLimits: { perKey: { rate: 10, burst: 10 }, authFailures: { rate: 0, burst: 0 } },
    });
    const send = sender(server);

    it('a text costing more than the burst gets 429 and its hash stays unknown; a cheaper one is kept', async () => {
      const dear = `query Dear { ${repeated(11, (index) => `l${index}: pets(limit: 1) { id }`)} }`;
      const refused = await send.register(dear);
      expect(refused.status).toBe(429);
      expect(codeOf(refused)).toBe('RATE_LIMITED');
      expect(codeOf(await send.byHash(dear))).toBe('PERSISTED_QUERY_NOT_FOUND');
      const cheap = `query Cheap { ${repeated(2, (index) => `l${index}: pets(limit: 1) { id }`)} }`;
      expect((await send.register(cheap)).status).toBe(200);
      expect((await send.byHash(cheap)).status).toBe(200);
    });
  });
});

describe('a registered text is kept only once its operation has run', () => {
  const server = useTestServer();
  const send = sender(server);
  const tag = () => randomBytes(4).toString('hex');

  /** Texts with a correct hash that never run, each unique, with the code they are refused with. */
  const neverRun = (): [string, string, string][] => [
    ['a syntax error', `query Broken${tag()} { pets(limit: 1) { id }`, 'GRAPHQL_PARSE_FAILED'],
    ['an unknown field', `query Unknown${tag()} { pets(limit: 1) { nope } }`, 'GRAPHQL_VALIDATION_FAILED'],
    ['fields 7 deep', `query Deep${tag()} { a { b { c { d { e { f { g } } } } } } }`, 'QUERY_TOO_DEEP'],
    ['a cost over the limit', fragmentChain(24, { root: `...F1 t${tag()}: __typename` }), 'QUERY_TOO_COMPLEX'],
    [
      'too many tokens',
      `query Long${tag()} { ${repeated(QUERY_LIMITS.tokens, () => '__typename')} }`,
      'TOO_MANY_TOKENS',
    ],
  ];

  it('a text that fails parsing, validation or a query limit gets its error, by POST and GET, and its hash stays unknown', async () => {
    for (const [what, text, code] of neverRun()) {
      const whole = await send.post({ query: text });
      expect(codeOf(whole), what).toBe(code);
      const registered = await send.register(text);
      expect(registered.status, what).toBe(whole.status);
      expect(registered.body, what).toEqual(whole.body);
      const byGet = await send.getText(text);
      expect(codeOf(byGet), what).toBe(code);
      const byHash = await send.byHash(text);
      expect(byHash.status, what).toBe(404);
      expect(codeOf(byHash), what).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(byHash.body.errors?.[0]?.message, what).toBe('PersistedQueryNotFound');
      expect(codeOf(await send.getByHash(text)), what).toBe('PERSISTED_QUERY_NOT_FOUND');
    }
  });

  it(`${APQ_LIMITS.texts} texts that never run push no kept text out`, async () => {
    const kept = fresh('Kept');
    const ran = await send.register(kept);
    expect(ran.status).toBe(200);
    const invalid = Array.from({ length: APQ_LIMITS.texts }, (_, index) => `query Invalid${index} { nope${index} }`);
    for (let start = 0; start < invalid.length; start += 20) {
      const answers = await Promise.all(invalid.slice(start, start + 20).map((text) => send.register(text)));
      for (const answer of answers) expect(codeOf(answer)).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    const byHash = await send.byHash(kept);
    expect(byHash.status).toBe(200);
    expect(byHash.body).toEqual(ran.body);
  });

  it('variables over the list-size limit or of the wrong type keep nothing; the same text with good ones is kept', async () => {
    const text = `query Sized${tag()}($n: Int!) { ${repeated(6, (index) => `l${index}: pets(limit: $n) { id }`)} }`;
    const tooMany = await send.register(text, apq(text), { n: 100 });
    expect(codeOf(tooMany)).toBe('QUERY_TOO_LARGE');
    const wrongType = await send.register(text, apq(text), { n: 'many' });
    expect(codeOf(wrongType)).toBe('BAD_USER_INPUT');
    expect(codeOf(await send.byHash(text, { n: 1 }))).toBe('PERSISTED_QUERY_NOT_FOUND');

    const ran = await send.register(text, apq(text), { n: 1 });
    expect(ran.status).toBe(200);
    expect(ran.body.errors).toBeUndefined();
    expect((await send.byHash(text, { n: 1 })).body).toEqual(ran.body);
    // A refused request by hash leaves the kept text in place.
    expect(codeOf(await send.byHash(text, { n: 100 }))).toBe('QUERY_TOO_LARGE');
    expect((await send.byHash(text, { n: 1 })).status).toBe(200);
  });

  it('a text the key lacks the scope for is answered 403 and not kept: a key with the scope registers it itself', async () => {
    const { key } = await createApiKeyStore(server.database.db).issue({
      name: 'reader',
      scopes: ['pets:read'],
      allowArbitraryDocuments: true,
    });
    const reader = sender(server, { Authorization: `Bearer ${key}` });
    const text = `mutation Refused${tag()} { createPet(input: { name: "ScopeRefused", categoryId: 1 }) { id } }`;
    // Keys are read every 2 s.
    await vi.waitFor(async () => expect(codeOf(await reader.register(text))).toBe('FORBIDDEN'), {
      timeout: 10_000,
      interval: 200,
    });
    expect(await storedNamed(server, 'ScopeRefused')).toBe(0);
    expect(codeOf(await send.byHash(text))).toBe('PERSISTED_QUERY_NOT_FOUND');

    expect((await send.register(text)).status).toBe(200);
    expect((await send.byHash(text)).status).toBe(200);
    expect(await storedNamed(server, 'ScopeRefused')).toBe(2);
    expect(codeOf(await reader.byHash(text))).toBe('FORBIDDEN');
  });

  it('a text the fast path has answered sent whole is registered by its hash like any other', async () => {
    const text = fresh('FastFirst');
    const whole = await send.post({ query: text });
    // The second one is answered by the fast path: Yoga has validated the text.
    expect((await send.post({ query: text })).body).toEqual(whole.body);
    expect(codeOf(await send.byHash(text))).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await send.register(text)).body).toEqual(whole.body);
    expect((await send.byHash(text)).body).toEqual(whole.body);
  });
});
