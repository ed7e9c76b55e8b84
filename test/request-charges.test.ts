import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { priceOf } from '../src/graphql/operation-admission.ts';
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
    // Introspection at the root is free and open to any key; it never makes a price below one.
    ['{ __typename __schema { queryType { name } } }', 1, undefined],
    ['{ __typename a: pets { id } }', 1, 'pets:read'],
    [
      'mutation { a: createPet(input: { name: "a", categoryId: 1 }) { id } b: createPet(input: { name: "b", categoryId: 1 }) { id } }',
      2,
      'pets:write',
    ],
  ])('%s costs %i and needs %s', (text, cost, scope) => {
    expect(priceOf(parse(text))).toEqual({ cost, scope });
  });

  it('picks the operation by name, and has no price for a document that selects none', () => {
    const document = parse(
      'query One { a: pets { id } } mutation Two { createPet(input: { name: "x", categoryId: 1 }) { id } }',
    );
    expect(priceOf(document, 'One')).toEqual({ cost: 1, scope: 'pets:read' });
    expect(priceOf(document, 'Two')).toEqual({ cost: 1, scope: 'pets:write' });
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
    expect(priceOf(document)).toEqual({ cost: levels, scope: 'pets:read' });
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
