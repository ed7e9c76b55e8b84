// Introspection pays for its work (issue 36, H2): each `__schema`/`__type` at the root costs a point,
// and its answer comes from a per-schema cache, so a key flooding large introspection answers within
// its limit cannot slow the instance for everyone else.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { type Outcome, percentile, type send, steadyLoad } from './support/steady-load.ts';
import { AUTH, uniqueDbName, useTestServer } from './support/test-server.ts';

/** The attack of the issue: 16 aliased full `__schema` selections (15 aliases, the most allowed). */
const SCHEMA_FIELDS =
  '{ types { name kind description fields(includeDeprecated: true) { name description args { name description type { kind name ofType { kind name ofType { kind name } } } defaultValue } type { kind name ofType { kind name ofType { kind name } } } isDeprecated deprecationReason } inputFields { name type { kind name ofType { kind name } } defaultValue } interfaces { name } enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason } possibleTypes { name } } directives { name description locations args { name type { kind name } } } }';
const ALIASED_SCHEMA = `{ ${Array.from({ length: 16 }, (_, index) => `${index === 0 ? '' : `s${index}: `}__schema { ...S }`).join(' ')} } fragment S on __Schema ${SCHEMA_FIELDS}`;
const RATE = 90;
const LOAD_MS = 4_000;

/** What is left of the key's quota this second, from the RateLimit field (`"default";r=42;t=1`). */
const remaining = (field: string | undefined) => Number(/;r=(\d+);/.exec(field ?? '')?.[1]);

describe('the price of introspection', () => {
  const server = useTestServer({
    rateLimits: { perKey: { rate: 1_000, burst: 1_000 }, authFailures: { rate: 0, burst: 0 } },
  });
  const post = (query: string) => server.request.post('/graphql').set(AUTH).send({ query });

  it('is a point per __schema or __type at the root, aliases apart; __typename is free', async () => {
    const cases: [string, number][] = [
      ['{ __schema { queryType { name } } }', 1],
      ['{ a: __schema { queryType { name } } b: __schema { queryType { name } } c: __type(name: "Pet") { name } }', 3],
      ['{ __typename a: __schema { queryType { name } } pets(limit: 1) { id } }', 2],
    ];
    for (const [query, cost] of cases) {
      // Twice: through Yoga, then through the fast path once Yoga has validated the document.
      for (let time = 0; time < 2; time++) {
        const before = remaining((await post('{ __typename }')).headers.ratelimit);
        const response = await post(query);
        expect(response.status, query).toBe(200);
        expect(response.body.errors).toBeUndefined();
        expect(before - remaining(response.headers.ratelimit), query).toBe(cost);
      }
    }
  });

  it('keeps an answer equal to the one it built, whichever path and however often', async () => {
    const query = '{ __type(name: "Pet") { name fields { name } } __schema { queryType { name } } }';
    const answers = await Promise.all([post(query), post(query), post(query)]);
    const [first] = answers;
    expect(first?.body.data.__type.name).toBe('Pet');
    for (const answer of answers) expect(answer.body).toEqual(first?.body);
  });
});

/** `/health` every 25 ms while the load runs: its latencies in ms. */
async function healthLatenciesDuring(origin: string, load: () => Promise<Outcome[]>) {
  const latencies: number[] = [];
  let running = true;
  const probe = (async () => {
    while (running) {
      const started = performance.now();
      await new Promise<void>((resolve) =>
        request(`${origin}/health`, (res) => res.resume().on('end', () => resolve()))
          .on('error', () => resolve())
          .end(),
      );
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  const outcomes = await load();
  running = false;
  await probe;
  return { latencies, outcomes };
}

const loadFor = (origin: string, next: () => Parameters<typeof send>[2]) => async () => {
  const load = steadyLoad(origin, RATE, next);
  await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
  return load.stop();
};

describe(`16 aliased __schema at ${RATE} requests a second`, () => {
  let generous: ServiceProcess;
  let ordinary: ServiceProcess;
  beforeAll(async () => {
    [generous, ordinary] = await Promise.all([
      startServiceOnRunDatabase({
        dbName: uniqueDbName('introspection'),
        env: { RATE_LIMIT_PER_KEY: '100000', RATE_LIMIT_BURST: '100000' },
      }),
      startServiceOnRunDatabase({ dbName: uniqueDbName('introspection') }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([generous?.stop(), ordinary?.stop()]);
  });

  const post = { method: 'POST' as const, path: '/graphql', headers: AUTH, body: { query: ALIASED_SCHEMA } };

  it.each([
    ['served', () => generous, () => post, 200],
    ['refused 429 (the default limits)', () => ordinary, () => post, 429],
  ])('leave /health answering within 50 ms (median) when %s', async (_, service, next, status) => {
    const { latencies, outcomes } = await healthLatenciesDuring(service().origin, loadFor(service().origin, next));
    const statuses = outcomes.map((outcome) => outcome.status);
    const median = percentile(latencies, 50);
    console.info(
      `${outcomes.length} requests (${statuses.filter((s) => s === status).length} ${status}); /health p50 ${median.toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
    );
    expect(statuses.filter((s) => s === status).length).toBeGreaterThan(outcomes.length / 2);
    expect(median).toBeLessThan(50);
  });

  it('leave /health answering within 50 ms (median) when answered 304', async () => {
    const path = `/graphql?query=${encodeURIComponent(ALIASED_SCHEMA)}`;
    const first = await fetch(`${generous.origin}${path}`, { headers: AUTH });
    expect(first.status).toBe(200);
    expect((await first.text()).length).toBeGreaterThan(100_000);
    const etag = first.headers.get('etag') as string;
    const { latencies, outcomes } = await healthLatenciesDuring(
      generous.origin,
      loadFor(generous.origin, () => ({ method: 'GET', path, headers: { ...AUTH, 'If-None-Match': etag } })),
    );
    const median = percentile(latencies, 50);
    console.info(`${outcomes.length} revalidations; /health p50 ${median.toFixed(1)} ms`);
    expect(outcomes.filter((outcome) => outcome.status === 304).length).toBe(outcomes.length);
    expect(median).toBeLessThan(50);
  });
});
