import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Response } from 'supertest';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { setEarlyHeader } from '../src/http/edge-response.ts';
import { rawRequest } from './support/raw-http.ts';
import { AUTH, listenOnLoopback, OTHER_API_KEY, type TestServer, useTestServer } from './support/test-server.ts';

const APP = 'http://localhost:5173';
const OTHER_APP = 'https://app.example.com';
const EXPOSED = [
  'Link',
  'ETag',
  'Location',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Idempotent-Replayed',
  'X-Request-Id',
];
/** 5 a second per key, bursts of 8; 3 failed authentications a second per address, bursts of 5. */
const LIMITS = { perKey: { rate: 5, burst: 8 }, authFailures: { rate: 3, burst: 5 } };

const listOf = (value: string | string[] | undefined) => String(value ?? '').split(/\s*,\s*/);
const corsHeadersOf = (headers: IncomingHttpHeaders) =>
  Object.keys(headers).filter((name) => name.startsWith('access-control-'));

/** An answer a page on `origin` may read: its origin named, every header it needs exposed, no credentials. */
function expectReadableBy(response: { headers: IncomingHttpHeaders }, origin: string): void {
  expect(response.headers['access-control-allow-origin']).toBe(origin);
  expect(listOf(response.headers.vary)).toContain('Origin');
  expect(listOf(response.headers['access-control-expose-headers'])).toEqual(expect.arrayContaining(EXPOSED));
  expect(response.headers['access-control-allow-credentials']).toBeUndefined();
}

function expectNoCors(response: { headers: IncomingHttpHeaders }): void {
  expect(corsHeadersOf(response.headers)).toEqual([]);
}

/** A browser's preflight: OPTIONS naming the method and headers the page means to send. */
const preflightTo =
  (server: TestServer) =>
  (path: string, origin = APP, method = 'POST') =>
    server.request
      .options(path)
      .set('Origin', origin)
      .set('Access-Control-Request-Method', method)
      .set('Access-Control-Request-Headers', 'authorization,content-type');

describe('CORS_ORIGINS=http://localhost:5173,https://app.example.com', () => {
  const server = useTestServer({ corsOrigins: `${APP},${OTHER_APP}` });
  const preflight = preflightTo(server);

  it.each([
    ['/graphql', 'GET, POST'],
    ['/v1/pets', 'GET, POST'],
    ['/v1/pets/1', 'GET'],
  ])('a preflight for %s without a key is answered 204 with what the route allows', async (path, methods) => {
    const response = await preflight(path);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(response.headers['access-control-allow-origin']).toBe(APP);
    expect(response.headers['access-control-allow-methods']).toBe(methods);
    const allowed = listOf(response.headers['access-control-allow-headers']).map((name) => name.toLowerCase());
    expect(allowed).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'idempotency-key', 'if-none-match', 'x-request-id']),
    );
    expect(allowed).toEqual(expect.arrayContaining(['apollographql-client-name', 'apollographql-client-version']));
    expect(response.headers['access-control-max-age']).toBe('7200');
    expect(listOf(response.headers.vary)).toContain('Origin');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    expect(response.headers['www-authenticate']).toBeUndefined();
  });

  it('each listed origin is answered with its own name', async () => {
    const response = await preflight('/graphql', OTHER_APP);
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe(OTHER_APP);
  });

  it('GET and POST answers carry the CORS headers, on REST and GraphQL', async () => {
    const list = await server.request.get('/v1/pets?limit=1').set('Origin', APP).set(AUTH);
    expect(list.status).toBe(200);
    expectReadableBy(list, APP);
    const created = await server.request
      .post('/v1/pets')
      .set('Origin', APP)
      .set(AUTH)
      .send({ name: 'Cors Rex', categoryId: 1 });
    expect(created.status).toBe(201);
    expectReadableBy(created, APP);
    const graphql = await server.request
      .post('/graphql')
      .set('Origin', APP)
      .set(AUTH)
      .send({ query: '{ pets { id } }' });
    expect(graphql.status).toBe(200);
    expectReadableBy(graphql, APP);
    // A document the fast path does not take goes through Yoga: its answers carry them too.
    const invalid = await server.request
      .get('/graphql?query=%7B%20nope%20%7D')
      .set({ Origin: APP, Accept: 'application/graphql-response+json', ...AUTH });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors).toHaveLength(1);
    expectReadableBy(invalid, APP);
  });

  it('error answers carry them too, so a page can read its 401, 404, 405 and the deprecation fields', async () => {
    const cases: Array<[number, () => Promise<Response>]> = [
      [401, () => server.request.post('/graphql').set('Origin', APP).send({ query: '{ pets { id } }' })],
      [401, () => server.request.get('/v1/pets').set('Origin', APP)],
      [404, () => server.request.get('/v1/pets/999999999').set('Origin', APP).set(AUTH)],
      [405, () => server.request.delete('/v1/pets').set('Origin', APP).set(AUTH)],
      // OPTIONS that names no method is not a preflight: it is answered as any other request.
      [401, () => server.request.options('/graphql').set('Origin', APP)],
    ];
    for (const [status, send] of cases) {
      const response = await send();
      expect(response.status).toBe(status);
      expectReadableBy(response, APP);
    }
    const deprecated = await server.request.get('/v1/pets/999999999').set('Origin', APP).set(AUTH);
    expect(deprecated.headers.deprecation).toBeDefined();
  });

  it('a disallowed origin gets no CORS headers; its preflight is answered as before CORS (401, or 405 with a key)', async () => {
    for (const origin of ['http://localhost:5174', 'http://evil.example', 'HTTP://LOCALHOST:5173', `${APP}/`]) {
      const answer = await server.request.get('/v1/pets?limit=1').set('Origin', origin).set(AUTH);
      expect(answer.status).toBe(200);
      expectNoCors(answer);
      expect(listOf(answer.headers.vary)).toContain('Origin');
      const refused = await preflight('/graphql', origin);
      expect(refused.status).toBe(401);
      expectNoCors(refused);
    }
    const keyed = await preflight('/v1/pets', 'http://evil.example').set(AUTH);
    expect(keyed.status).toBe(405);
    expect(keyed.headers.allow).toBe('GET, POST, HEAD');
    expectNoCors(keyed);
  });

  it('Origin: null (sandboxed pages, file:) is never allowed', async () => {
    expectNoCors(await preflight('/graphql', 'null'));
    expectNoCors(await server.request.get('/v1/pets?limit=1').set('Origin', 'null').set(AUTH));
  });

  it('huge, doubled or malformed Origin values get no CORS headers and never a 500', async () => {
    const url = `${server.baseUrl}/v1/pets?limit=1`;
    const values: Array<string | string[]> = [
      `${APP}${'a'.repeat(8_000)}`,
      [APP, OTHER_APP],
      `${APP}, ${OTHER_APP}`,
      '\u00ff\u00fe',
      '',
    ];
    for (const origin of values) {
      const answer = await rawRequest(url, { headers: { ...AUTH, origin } as Record<string, string> });
      expect(answer.status).toBe(200);
      expectNoCors(answer);
      const options = { 'access-control-request-method': 'GET', origin } as Record<string, string>;
      const refused = await rawRequest(url, { method: 'OPTIONS', headers: options });
      expect(refused.status).toBe(401);
      expectNoCors(refused);
    }
    // Past Node's header limit: 431 before the edge, as on every route.
    const tooBig = await rawRequest(url, { headers: { ...AUTH, origin: 'x'.repeat(20_000) } });
    expect(tooBig.status).toBe(431);
  });

  it('pages and probes are not cross-origin routes: no CORS headers, and an unknown path is not preflighted', async () => {
    for (const path of ['/health', '/v1/openapi.json', '/']) {
      expectNoCors(await server.request.get(path).set('Origin', APP));
    }
    const unknown = await preflight('/v1/nope');
    expect(unknown.status).toBe(401);
    expectNoCors(unknown);
  });
});

describe('CORS with rate limits (5/s per key, bursts of 8; failed authentications 3/s, bursts of 5)', () => {
  const server = useTestServer({ corsOrigins: APP, rateLimits: LIMITS });
  const preflight = preflightTo(server);

  it("preflights use up neither a key's limit nor the address's failed authentications", async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => preflight(i % 2 ? '/graphql' : '/v1/pets')));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 204));
    // The key's first request: 5/s less the one it spends, as for a key that sent nothing before.
    const keyed = await server.request.get('/v1/pets?limit=1').set('Origin', APP).set(AUTH);
    expect(keyed.status).toBe(200);
    expect(keyed.headers.ratelimit).toMatch(/^"default";r=4;t=[01]$/);
    // The address is not blocked: a request without a key is a plain 401, not 429.
    expect((await server.request.get('/v1/pets').set('Origin', APP)).status).toBe(401);
  });

  it('a 429 carries them, with Retry-After exposed', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        server.request
          .get('/v1/pets?limit=1')
          .set('Origin', APP)
          .set({ Authorization: `Bearer ${OTHER_API_KEY}` }),
      ),
    );
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expectReadableBy(answer, APP);
      expect(answer.headers['retry-after']).toBeDefined();
    }
  });
});

describe('CORS off (no CORS_ORIGINS, the default)', () => {
  const server = useTestServer();

  it('no answer carries CORS headers or Vary: Origin, and a preflight is a 401 as any keyless request', async () => {
    const answer = await server.request.get('/v1/pets?limit=1').set('Origin', APP).set(AUTH);
    expect(answer.status).toBe(200);
    expectNoCors(answer);
    expect(listOf(answer.headers.vary)).not.toContain('Origin');
    const preflight = await server.request
      .options('/graphql')
      .set('Origin', APP)
      .set('Access-Control-Request-Method', 'POST');
    expect(preflight.status).toBe(401);
    expectNoCors(preflight);
  });
});

describe('CORS_ORIGINS in the configuration', () => {
  const problemsOf = (value: string) => {
    const loaded = loadConfig({ CORS_ORIGINS: value });
    return loaded.ok ? [] : loaded.problems;
  };

  it('takes exact origins, comma-separated; empty is off', () => {
    const loaded = loadConfig({ CORS_ORIGINS: ` ${APP} , ${OTHER_APP},https://a.example:8443` });
    expect(loaded.ok && loaded.config.CORS_ORIGINS).toEqual([APP, OTHER_APP, 'https://a.example:8443']);
    const off = loadConfig({ CORS_ORIGINS: '' });
    expect(off.ok && off.config.CORS_ORIGINS).toEqual([]);
  });

  it.each([
    ['*', 'CORS_ORIGINS (entry 1): "*" is not allowed'],
    ['null', 'CORS_ORIGINS (entry 1): "null" is not allowed'],
    ['app.example.com', 'is not an origin'],
    ['ftp://app.example.com', 'must start with http:// or https://'],
    [`${APP}/`, 'no path'],
    [`${APP}/app`, 'no path'],
    [`${APP}?a=1`, 'no path or query'],
    ['HTTPS://App.Example.com', 'as browsers send it: https://app.example.com'],
    ['https://app.example.com:443', 'as browsers send it: https://app.example.com'],
  ])('refuses %s, saying why', (value, message) => {
    const problems = problemsOf(`${APP},${value}`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message.startsWith('CORS') ? message.replace('entry 1', 'entry 2') : message);
    expect(problems[0]).toMatch(/^CORS_ORIGINS \(entry 2\): /);
  });

  it.each([
    'https://user:s3cret@app.example.com',
    // Wrong in other ways too: those checks would repeat the entry.
    'ftp://admin:s3cret@app.example.com',
    'https://admin:s3cret@',
    'https://admin:s3cret@app.example.com/path',
  ])('never repeats a password written into an origin (%#)', (entry) => {
    const problems = problemsOf(entry);
    expect(problems).toEqual(['CORS_ORIGINS (entry 1): an origin carries no user or password']);
  });
});

describe("early headers beside an answer's own", () => {
  it('gives way to one of the same name in any letter case, and only to it', async () => {
    const { http, baseUrl } = await listenOnLoopback((_req, res) => {
      setEarlyHeader(res, 'Cache-Control', 'no-store');
      // `^` and `~` differ by the bit that separates letter cases: still two names.
      setEarlyHeader(res, 'X-Tag^', 'early');
      res.writeHead(200, { 'cache-CONTROL': 'private', 'X-Tag~': 'own' }).end();
    });
    try {
      const response = await rawRequest(baseUrl);
      expect(response.headers['cache-control']).toBe('private');
      expect(response.headers['x-tag^']).toBe('early');
      expect(response.headers['x-tag~']).toBe('own');
    } finally {
      http.close();
    }
  });
});

describe('Vary on an answer that sets its own', () => {
  it.each([
    ['writeHead', (res: ServerResponse) => res.writeHead(200, { Vary: 'Accept' }).end()],
    ['setHeader', (res: ServerResponse) => res.setHeader('Vary', 'Accept').writeHead(200).end()],
  ])('through %s, keeps the early Origin beside it', async (_name, answer) => {
    const { http, baseUrl } = await listenOnLoopback((_req, res) => {
      setEarlyHeader(res, 'Vary', 'Origin');
      answer(res);
    });
    try {
      const response = await rawRequest(baseUrl);
      expect(response.headers.vary).toBe('Origin, Accept');
    } finally {
      http.close();
    }
  });
});
