import { parse } from 'graphql';
import type { RateLimiterLike } from 'rate-limiter-flexible';
import { describe, expect, it } from 'vitest';
import { type LimiterStore, memoryLimiterStore } from '../src/edge/limiter-store.ts';
import { createRateLimits, type Rate } from '../src/edge/rate-limits.ts';
import { priceOf } from '../src/graphql/operation-admission.ts';
import { capturingLogger } from './support/capturing-logger.ts';
import { executeGraphQL } from './support/graphql-client.ts';
import { sampleIn } from './support/metric-sample.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { AUTH, OTHER_API_KEY, type TestServer, useTestServer } from './support/test-server.ts';

const OFF = { rate: 0, burst: 0 };
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/** `count` root fields: the first plain, the others aliased (at most 15 aliases are allowed). */
const fields = (count: number, field: (index: number) => string) =>
  Array.from({ length: count }, (_, index) => `${index === 0 ? '' : `f${index}: `}${field(index)}`).join(' ');

const createMany = (count: number, prefix: string) =>
  `mutation { ${fields(count, (index) => `createPet(input: { name: "${prefix} ${index}", categoryId: 1 }) { id }`)} }`;
const listMany = (count: number) => `query { ${fields(count, () => 'pets(limit: 31) { id }')} }`;

const storedStartingWith = (server: TestServer, prefix: string) =>
  server.database.db.collection('pets').countDocuments({ name: { $regex: `^${prefix} ` } });

const perKeyRefusals = async (server: TestServer) =>
  sampleIn(await server.metrics.scrape.text(), 'rate_limited_requests_total', { limit: 'per_key' });

/** What is left of the key's quota this second, from the RateLimit field (`"default";r=42;t=1`). */
function remaining(headers: Record<string, string | undefined>): number {
  const found = /;r=(\d+);/.exec(headers.ratelimit ?? '');
  if (!found) throw new Error(`no RateLimit field: ${headers.ratelimit}`);
  return Number(found[1]);
}

describe('the price of an operation: one point per root field it runs', () => {
  it.each([
    ['{ pets(limit: 1) { id } }', 1, 'pets:read'],
    ['{ a: pets(limit: 1) { id } b: pets(limit: 1) { id } c: pet(id: "1") { id } }', 3, 'pets:read'],
    // Fields of one response key are merged and run once.
    ['{ pets(limit: 1) { id } pets(limit: 1) { name } }', 1, 'pets:read'],
    // Fragments on the root type count their fields, a fragment spread twice once, inline fragments too.
    [
      '{ ...A ...A ... on Query { c: pets { id } } } fragment A on Query { a: pets { id } b: pets { id } }',
      3,
      'pets:read',
    ],
    // Introspection at the root is open to any key; __schema and __type cost a point each, __typename nothing.
    ['{ __typename __schema { queryType { name } } }', 1, undefined],
    ['{ __typename }', 1, undefined],
    [
      '{ a: __schema { queryType { name } } b: __schema { queryType { name } } __type(name: "Pet") { name } }',
      3,
      undefined,
    ],
    ['{ __schema { queryType { name } } pets(limit: 1) { id } }', 2, 'pets:read'],
    ['{ __typename a: pets { id } }', 1, 'pets:read'],
    [
      'mutation { a: createPet(input: { name: "a", categoryId: 1 }) { id } b: createPet(input: { name: "b", categoryId: 1 }) { id } }',
      2,
      'pets:write',
    ],
  ])('%s costs %i and needs %s', (text, cost, scope) => {
    const introspection = scope === undefined && text.includes('__schema');
    expect(priceOf(parse(text))).toEqual({ cost, scope, introspection });
  });

  it('picks the operation by name, and has no price for a document that selects none', () => {
    const document = parse(
      'query One { a: pets { id } } mutation Two { createPet(input: { name: "x", categoryId: 1 }) { id } }',
    );
    expect(priceOf(document, 'One')).toEqual({ cost: 1, scope: 'pets:read', introspection: false });
    expect(priceOf(document, 'Two')).toEqual({ cost: 1, scope: 'pets:write', introspection: false });
    expect(priceOf(document)).toBeUndefined();
    expect(priceOf(document, 'Three')).toBeUndefined();
  });

  it('is worked out in time linear in the document: a chain of fragments each spreading the next twice', () => {
    const levels = 2_000;
    const chain = Array.from(
      { length: levels },
      (_, level) => `fragment F${level} on Query { f${level}: pets { id } ...F${level + 1} ...F${level + 1} }`,
    );
    const text = `{ ...F0 } ${chain.join(' ')} fragment F${levels} on Query { __typename }`;
    const document = parse(text, { maxTokens: Number.POSITIVE_INFINITY });
    const started = performance.now();
    expect(priceOf(document)).toEqual({ cost: levels, scope: 'pets:read', introspection: false });
    const ms = performance.now() - started;
    console.info(`price of a ${levels}-level fragment chain (${text.length} bytes): ${ms.toFixed(2)} ms`);
    expect(ms).toBeLessThan(200);
  });
});

describe('against a burst of 10 (5 a second)', () => {
  const server = useTestServer({ rateLimits: { perKey: { rate: 5, burst: 10 }, authFailures: OFF } });

  it('a mutation of 12 aliased createPet fields is refused with 429 before anything runs, and stores nothing', async () => {
    const document = createMany(12, 'Charged');
    const refusedBefore = await perKeyRefusals(server);
    // Through Yoga the first time, through the fast path the second, in both media types.
    for (const accept of ['application/json', GRAPHQL_RESPONSE]) {
      const response = await server.request
        .post('/graphql')
        .set({ ...AUTH, Accept: accept })
        .send({ query: document });
      expect(response.status).toBe(429);
      expect(response.body.data).toBeUndefined();
      expect(response.body.errors).toEqual([
        expect.objectContaining({
          message: expect.stringContaining('costs 12 points'),
          extensions: { code: 'RATE_LIMITED' },
        }),
      ]);
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(response.headers['ratelimit-policy']).toBe('"default";q=5;w=1');
      expect(response.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
    }
    expect(await storedStartingWith(server, 'Charged')).toBe(0);
    // Counted with the edge's per-key refusals.
    expect((await perKeyRefusals(server)) - refusedBefore).toBe(2);
    // Nothing was spent on the refusals beyond their first point: a small request still goes through.
    expect((await executeGraphQL(server, '{ pets(limit: 1) { id } }')).status).toBe(200);
  });

  it('a request within the burst but over what is left this second is refused with 429, and runs nothing', async () => {
    const key = { Authorization: `Bearer ${OTHER_API_KEY}` };
    const first = await server.request
      .post('/graphql')
      .set(key)
      .send({ query: createMany(8, 'Spent') });
    expect(first.status).toBe(200);
    expect(await storedStartingWith(server, 'Spent')).toBe(8);
    const second = await server.request
      .post('/graphql')
      .set(key)
      .send({ query: createMany(8, 'Over') });
    expect(second.status).toBe(429);
    expect(second.body.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMITED' });
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await storedStartingWith(server, 'Over')).toBe(0);
  });
});

describe('against the default limits (100 a second, bursts of 200)', () => {
  const server = useTestServer({ rateLimits: { perKey: { rate: 100, burst: 200 }, authFailures: OFF } });
  const rest = restClient(server);

  /** The drop in RateLimit's remaining points that `send` caused, after one cheap request. */
  async function pointsSpentBy(send: () => Promise<{ status: number; headers: Record<string, string | undefined> }>) {
    const before = remaining((await executeGraphQL(server, '{ __typename }')).headers);
    const response = await send();
    expect(response.status).toBe(200);
    const after = remaining(response.headers);
    // The one-second window may have turned between the two: then it starts from the full quota.
    return after < before ? before - after : 100 - after;
  }

  it('16 aliased pets(limit: 31) lists cost 16 points, through Yoga and through the fast path', async () => {
    const query = listMany(16);
    const send = () => server.request.post('/graphql').set(AUTH).send({ query });
    expect(await pointsSpentBy(send)).toBe(16);
    expect(await pointsSpentBy(send)).toBe(16);
  });

  it('a query of one list costs one point, and so does each REST request', async () => {
    expect(
      await pointsSpentBy(() =>
        server.request
          .post('/graphql')
          .set(AUTH)
          .send({ query: listMany(1) }),
      ),
    ).toBe(1);
    expect(
      await pointsSpentBy(async () => {
        const response = await rest.listPets('?limit=31');
        expectStatus(response, 200);
        return response;
      }),
    ).toBe(1);
  });
});

/** The edge's rate limits alone, on memory counters whose every call is counted, for one key. */
function limitsFor(perKey: Rate) {
  const calls = { count: 0 };
  const counting: LimiterStore = (spec) => {
    const counter = memoryLimiterStore(spec);
    const counted = (method: 'consume' | 'get' | 'reward' | 'penalty' | 'delete') => {
      const original = counter[method].bind(counter) as (...args: unknown[]) => unknown;
      (counter as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        calls.count++;
        return original(...args);
      };
    };
    for (const method of ['consume', 'get', 'reward', 'penalty', 'delete'] as const) counted(method);
    return counter as RateLimiterLike;
  };
  const limits = createRateLimits({
    perKey,
    authFailures: OFF,
    logger: capturingLogger().logger,
    store: counting,
  });
  const headers: Record<string, string> = {};
  const exchange = {
    keyId: 'key-1',
    id: 'request-1',
    setResponseHeader: (name: string, value: string) => (headers[name] = value),
  };
  /** A request of `cost` points as the edge and admission take it: its refusal, or undefined. */
  const send = async (cost: number) => (await limits.request(exchange)) ?? (await limits.charge(exchange, cost));
  return { limits, exchange, headers, calls, send };
}

describe('paying a price from the second and the burst allowance (rate 5, burst 10)', () => {
  it('a price the key cannot pay now is refused naming it, and spends nothing beyond its first point', async () => {
    const { send, headers } = limitsFor({ rate: 5, burst: 10 });
    for (let sent = 0; sent < 3; sent++) expect(await send(1)).toBeUndefined();
    // 7 points left; 9 asked: refused, and only the edge's point is spent (6 left: 1 of the second, 5 of the burst).
    const refused = await send(9);
    expect(refused?.message).toMatch(
      /^This request costs 9 points \(one per root field it runs\), more than this API key has left now; retry after \d+ s$/,
    );
    expect(refused?.headers.RateLimit).toMatch(/^"default";r=[0-5];t=[01]$/);
    expect(Number(refused?.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    // The 6 points left pay a price of 6 (whatever second it is now: the burst allowance holds 5).
    expect(await send(6)).toBeUndefined();
    expect(headers.RateLimit).toMatch(/^"default";r=\d;t=[01]$/);
  });

  it('a price is paid in at most six store calls, whatever it is', async () => {
    const { limits, exchange, send, calls } = limitsFor({ rate: 100, burst: 200 });
    expect(await limits.request(exchange)).toBeUndefined();
    const before = calls.count;
    expect(await limits.charge(exchange, 200)).toBeUndefined();
    expect(calls.count - before).toBeLessThanOrEqual(6);
    // All 200 points were spent: the next point is refused, as one over the second's quota.
    expect((await send(1))?.message).toMatch(/^Too many requests for this API key/);
  });

  it('two prices racing for the same points: neither is paid twice, and a refused one gives back what it took', async () => {
    const { limits, exchange, send } = limitsFor({ rate: 5, burst: 10 });
    // Two requests of 7 points each, charged together: both read 8 left; the first pays 6 (3 + 3).
    await limits.request(exchange);
    await limits.request(exchange);
    const [first, second] = await Promise.all([limits.charge(exchange, 7), limits.charge(exchange, 7)]);
    expect(first).toBeUndefined();
    expect(second?.message).toMatch(/costs 7 points/);
    // Exactly 2 points are left (of the burst allowance): the refused charge kept none of what it took.
    expect(await send(2)).toBeUndefined();
    expect((await send(1))?.message).toMatch(/^Too many requests/);
  });
});

describe('a charge refused at admission, on the real service (rate 5, burst 10)', () => {
  const server = useTestServer({ rateLimits: { perKey: { rate: 5, burst: 10 }, authFailures: OFF } });

  it('spends nothing beyond its first point: the key is not locked out by one over-priced request', async () => {
    for (let sent = 0; sent < 3; sent++) expect((await executeGraphQL(server, '{ __typename }')).status).toBe(200);
    const refused = await server.request
      .post('/graphql')
      .set(AUTH)
      .send({ query: listMany(9) });
    expect(refused.status).toBe(429);
    expect(refused.body.errors?.[0]?.message).toMatch(/^This request costs 9 points/);
    expect(refused.body.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMITED' });
    expect(refused.headers.ratelimit).toMatch(/^"default";r=\d;t=\d+$/);
    // 6 points are left (5 of them the burst allowance's, which refills only every 10 s): 6 fields run.
    const served = await server.request
      .post('/graphql')
      .set(AUTH)
      .send({ query: listMany(6) });
    expect(served.status).toBe(200);
    expect(served.body.errors).toBeUndefined();
  });
});

describe('a request refused for its list size (default limits: 100 a second, bursts of 200)', () => {
  const server = useTestServer({ rateLimits: { perKey: { rate: 100, burst: 200 }, authFailures: OFF } });
  const query = `query Lists($n: Int!) { ${fields(12, () => 'pets(limit: $n) { id }')} }`;
  const send = (n: number) =>
    server.request
      .post('/graphql')
      .set({ ...AUTH, Accept: GRAPHQL_RESPONSE })
      .send({ query, variables: { n } });

  it("pays only the edge's point, not its price, through Yoga and through the fast path", async () => {
    // Through Yoga (the document is not known yet), then learnt by a small request, then through the fast path.
    for (const path of ['Yoga', 'fast path']) {
      if (path === 'fast path') expect((await send(1)).status).toBe(200);
      const before = remaining((await executeGraphQL(server, '{ __typename }')).headers);
      const refused = await send(50);
      expect(refused.status, path).toBe(400);
      expect(refused.body.errors?.[0]?.extensions?.code, path).toBe('QUERY_TOO_LARGE');
      const after = remaining((await executeGraphQL(server, '{ __typename }')).headers);
      // Its own point and the next request's; the one-second window may have turned in between.
      expect(after < before ? before - after : 100 - after, path).toBeLessThanOrEqual(2);
    }
  });
});
