import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { clientAddressOf, limiterBucketOf } from '../src/edge/client-address.ts';
import { rateLimitsOf } from '../src/edge/rate-limits.ts';
import { capturingLogger } from './support/capturing-logger.ts';
import { executeGraphQL } from './support/graphql-client.ts';
import { expectError } from './support/openapi-contract.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { API_KEY, OTHER_API_KEY, startTestServer, type TestServer, useTestServer } from './support/test-server.ts';

const OFF = { rate: 0, burst: 0 };
/** 5 a second per key, bursts of 8: the ninth request within a second is refused. */
const PER_KEY = { rate: 5, burst: 8 };
/** 3 failed authentications a second per address, bursts of 5. */
const AUTH_FAILURES = { rate: 3, burst: 5 };

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const WRONG = bearer(`${API_KEY}-wrong`);

/** Sends `count` requests at once and returns their statuses in order. */
async function burst<T extends { status: number }>(count: number, send: () => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, send));
}

const statuses = (responses: { status: number }[]) => responses.map((response) => response.status);

function expectRateLimited(response: { status: number; headers: Record<string, string | string[] | undefined> }) {
  expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(response.headers['ratelimit-policy']).toMatch(/^"[a-z-]+";q=\d+;w=1$/);
  expect(response.headers.ratelimit).toMatch(/^"[a-z-]+";r=0;t=\d+$/);
}

describe('per API key (5/s, bursts of 8)', () => {
  const server = useTestServer({ rateLimits: { perKey: PER_KEY, authFailures: OFF } });
  const rest = restClient(server);

  it('when a key sends one request, then the response carries the IETF RateLimit fields', async () => {
    const response = await rest.listPets('?limit=1', bearer(OTHER_API_KEY));
    expectStatus(response, 200);
    expect(response.headers['ratelimit-policy']).toBe('"default";q=5;w=1');
    expect(response.headers.ratelimit).toMatch(/^"default";r=4;t=[01]$/);
    expect(response.headers['ratelimit-limit']).toBeUndefined();
    expect(response.headers['ratelimit-remaining']).toBeUndefined();
  });

  it('when a key sends more than its burst, then 429 RATE_LIMITED with Retry-After; other keys go on', async () => {
    const responses = await burst(12, () => rest.listPets('?limit=1'));
    expect(statuses(responses).filter((status) => status === 200)).toHaveLength(8);
    const refused = responses.filter((response) => response.status === 429);
    expect(refused).toHaveLength(4);
    for (const response of refused) {
      expectError(response, 429, 'RATE_LIMITED');
      expectRateLimited(response);
      expect(response.headers['ratelimit-policy']).toBe('"default";q=5;w=1');
    }
    // The limit is the key's, not the address's.
    expectStatus(await rest.listPets('?limit=1', bearer(OTHER_API_KEY)), 200);
    // Every limited route: GraphQL is refused in its own shape, an unknown path with the Error body.
    const graphql = await executeGraphQL(server, '{ __typename }');
    expect(graphql.status).toBe(429);
    expect(graphql.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expectRateLimited(graphql);
    const unknown = await rest.send('GET', '/v1/nowhere');
    expectError(unknown, 429, 'RATE_LIMITED');
  });

  it('when the second has passed, then the key is served again (the burst allowance is spent)', async () => {
    await sleep(1_100);
    const responses = await burst(5, () => rest.listPets('?limit=1'));
    expect(statuses(responses)).toEqual([200, 200, 200, 200, 200]);
  });

  it('public routes are not limited and carry no RateLimit fields', async () => {
    await burst(10, () => rest.listPets('?limit=1'));
    for (const path of ['/health', '/ready', '/v1/openapi.json', '/v1/docs']) {
      const response = await server.request.get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.ratelimit, path).toBeUndefined();
    }
    const graphiql = await server.request.get('/graphql').set('Accept', 'text/html');
    expect(graphiql.status).toBe(200);
  });
});

describe('per client address, for failed authentication (3/s, bursts of 5)', () => {
  const { logger, lines } = capturingLogger();
  const server = useTestServer({ rateLimits: { perKey: OFF, authFailures: AUTH_FAILURES }, logger });
  const rest = restClient(server);

  it('when an address keeps sending wrong keys, then 429 instead of 401, once logged; its valid keys are still served', async () => {
    const first = await rest.listPets('', WRONG);
    expectError(first, 401, 'UNAUTHENTICATED');
    expect(first.headers['ratelimit-policy']).toBe('"auth-failures";q=3;w=1');
    expect(first.headers.ratelimit).toMatch(/^"auth-failures";r=2;t=[01]$/);

    const more = await burst(6, () => rest.listPets('', WRONG));
    expect(statuses(more).filter((status) => status === 401)).toHaveLength(4);
    for (const response of more.filter(({ status }) => status === 429)) {
      expectError(response, 429, 'RATE_LIMITED');
      expectRateLimited(response);
    }
    // 25 wrong keys in all: the guesser stays refused, whatever it sends without a valid key.
    const rest18 = await burst(18, () => rest.listPets('', WRONG));
    expect(new Set(statuses(rest18))).toEqual(new Set([429]));
    expectError(await rest.listPets('', {}), 429, 'RATE_LIMITED');

    // Its neighbours behind the same address (a NAT, a balancer) are not locked out: valid keys are served.
    expectStatus(await rest.listPets('?limit=1'), 200);
    expectStatus(await rest.listPets('?limit=1', bearer(OTHER_API_KEY)), 200);
    const graphql = await executeGraphQL(server, '{ __typename }');
    expect(graphql.status).toBe(200);
    expectError(await rest.listPets('', WRONG), 429, 'RATE_LIMITED');

    // One warning when the block starts, naming the address, the request and how long.
    const blocks = lines.filter((line) => line.msg?.startsWith('client address blocked'));
    expect(blocks).toEqual([
      expect.objectContaining({
        level: 40,
        clientAddress: expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/),
        reqId: expect.any(String),
        blockedForSeconds: expect.any(Number),
      }),
    ]);
    expect(blocks[0]?.blockedForSeconds).toBeGreaterThanOrEqual(1);
  });

  it('when Retry-After has passed, then a wrong key gets 401 again', async () => {
    const refused = await rest.listPets('', WRONG);
    expectError(refused, 429, 'RATE_LIMITED');
    await sleep(Number(refused.headers['retry-after']) * 1000 + 100);
    expectError(await rest.listPets('', WRONG), 401, 'UNAUTHENTICATED');
    const response = await rest.listPets('?limit=1');
    expectStatus(response, 200);
    // No per-key limit configured: no RateLimit fields on a served request.
    expect(response.headers.ratelimit).toBeUndefined();
  });
});

/** The statuses of `keys` sent one after another, each as from the client `forwardedFor` names (through the proxy). */
async function fromClients(server: TestServer, sent: { key: string; forwardedFor: string }[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const { key, forwardedFor } of sent) {
    const response = await server.request.get('/v1/pets?limit=1').set(bearer(key)).set('X-Forwarded-For', forwardedFor);
    statuses.push(response.status);
  }
  return statuses;
}

const times = <T>(count: number, value: T): T[] => Array.from({ length: count }, () => value);
const WRONG_KEY = `${API_KEY}-wrong`;

describe('behind a balancer: TRUST_PROXY names the proxies whose X-Forwarded-For is believed', () => {
  const server = useTestServer({ rateLimits: { perKey: OFF, authFailures: AUTH_FAILURES }, trustProxy: 'loopback' });

  it('one client behind the proxy guessing keys is refused; other clients behind the same proxy are served', async () => {
    const guesser = '203.0.113.7';
    const guesses = await fromClients(server, times(6, { key: WRONG_KEY, forwardedFor: guesser }));
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429]);
    // Its valid key is served; its wrong one is not, written as an IPv4-mapped IPv6 address either.
    expect(await fromClients(server, [{ key: API_KEY, forwardedFor: guesser }])).toEqual([200]);
    expect(await fromClients(server, [{ key: WRONG_KEY, forwardedFor: `::ffff:${guesser}` }])).toEqual([429]);
    // Every socket is the proxy's (loopback here), yet the other client is told apart.
    expect(await fromClients(server, [{ key: WRONG_KEY, forwardedFor: '198.51.100.9' }])).toEqual([401]);
    // What the guesser writes in its own X-Forwarded-For is not believed: the proxy appends the real address.
    expect(await fromClients(server, [{ key: WRONG_KEY, forwardedFor: `198.51.100.9, ${guesser}` }])).toEqual([429]);
  });

  it('an IPv6 guesser is counted with its whole /64: a new address in it does not start afresh', async () => {
    const network = '2001:db8:1:2';
    const guesses = await fromClients(
      server,
      Array.from({ length: 6 }, (_, index) => ({ key: WRONG_KEY, forwardedFor: `${network}::${index + 1}` })),
    );
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429]);
    // Any address of that /64, however it is written, is refused without a valid key, served with one.
    expect(await fromClients(server, [{ key: WRONG_KEY, forwardedFor: `${network}:ffff:ffff:ffff:fff0` }])).toEqual([
      429,
    ]);
    expect(await fromClients(server, [{ key: WRONG_KEY, forwardedFor: '2001:0db8:0001:0002::abcd' }])).toEqual([429]);
    expect(await fromClients(server, [{ key: API_KEY, forwardedFor: `${network}::99` }])).toEqual([200]);
    // The next /64 is another subscriber.
    expect(await fromClients(server, [{ key: WRONG_KEY, forwardedFor: '2001:db8:1:3::1' }])).toEqual([401]);
  });
});

describe('the bucket a client address counts in (limiterBucketOf)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:10.0.0.1', '10.0.0.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::9', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['2001:db8:1:2::192.0.2.1', '2001:db8:1:2::/64'],
    // Not an IP address (an X-Forwarded-For entry nobody vouched for): counted as it is.
    ['not-an-address', 'not-an-address'],
    ['2001:db8::1::2', '2001:db8::1::2'],
    ['', ''],
  ])('counts %s in %s', (address, bucket) => {
    expect(limiterBucketOf(address)).toBe(bucket);
  });

  it('leaves clientAddressOf as it was: the address itself, for logs and traces', () => {
    const req = { socket: { remoteAddress: '2001:db8:1:2::9' }, headers: {} } as IncomingMessage;
    expect(clientAddressOf([])(req)).toBe('2001:db8:1:2::9');
  });
});

describe("without TRUST_PROXY (the default), X-Forwarded-For is anyone's to write", () => {
  const server = useTestServer({ rateLimits: { perKey: OFF, authFailures: AUTH_FAILURES } });

  it('is ignored: a client cannot dodge the limit by sending a new address with each guess', async () => {
    const guesses = await fromClients(
      server,
      ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5', '192.0.2.6'].map((forwardedFor) => ({
        key: WRONG_KEY,
        forwardedFor,
      })),
    );
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('is ignored from a peer outside the trusted ranges too', async () => {
    const elsewhere = await startTestServer({
      rateLimits: { perKey: OFF, authFailures: AUTH_FAILURES },
      trustProxy: '10.0.0.0/8, 192.168.0.1',
    });
    try {
      const guesses = await fromClients(
        elsewhere,
        ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5', '192.0.2.6'].map((forwardedFor) => ({
          key: WRONG_KEY,
          forwardedFor,
        })),
      );
      expect(guesses).toEqual([401, 401, 401, 401, 401, 429]);
    } finally {
      await elsewhere.close();
    }
  });
});

describe('with both limits off (rates of 0)', () => {
  const server: TestServer = useTestServer({ rateLimits: { perKey: OFF, authFailures: OFF } });
  const rest = restClient(server);

  it('then nothing is limited and no RateLimit fields are sent', async () => {
    const wrong = await burst(30, () => rest.listPets('', WRONG));
    expect(new Set(statuses(wrong))).toEqual(new Set([401]));
    expect(wrong[0]?.headers.ratelimit).toBeUndefined();
    const served = await rest.listPets('?limit=1');
    expectStatus(served, 200);
    expect(served.headers.ratelimit).toBeUndefined();
  });
});

describe('rate limits from the environment', () => {
  it('default to 100/s with bursts of 200 per key, and 10/s with bursts of 20 failed authentications', () => {
    const loaded = loadConfig({});
    expect(loaded.ok && rateLimitsOf(loaded.config)).toEqual({
      perKey: { rate: 100, burst: 200 },
      authFailures: { rate: 10, burst: 20 },
    });
  });

  it('take RATE_LIMIT_* and AUTH_FAILURE_*, 0 turning a limit off, and refuse a burst below its rate', () => {
    const loaded = loadConfig({ RATE_LIMIT_PER_KEY: '0', AUTH_FAILURE_LIMIT: '50', AUTH_FAILURE_BURST: '80' });
    expect(loaded.ok && rateLimitsOf(loaded.config)).toEqual({
      perKey: { rate: 0, burst: 200 },
      authFailures: { rate: 50, burst: 80 },
    });
    const bad = loadConfig({ RATE_LIMIT_PER_KEY: '300', AUTH_FAILURE_BURST: '5' });
    const problems = bad.ok ? [] : bad.problems;
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual(['AUTH_FAILURE_BURST', 'RATE_LIMIT_BURST']);
    // Below 100 the REST list route itself would trip the GraphQL list-size limit.
    expect(loadConfig({ MAX_GRAPHQL_LIST_ITEMS: '50' }).ok).toBe(false);
  });
});
