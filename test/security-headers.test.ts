import { describe, expect, it } from 'vitest';
import { AUTH, useTestServer } from './support/test-server.ts';

const server = useTestServer();

/** Answers that need a key, whatever their status, except a GET's 200 and 304 (below). */
const KEYED: Array<[string, () => ReturnType<typeof server.request.get>]> = [
  ['GET /v1/pets 401', () => server.request.get('/v1/pets')],
  ['POST /v1/pets 400', () => server.request.post('/v1/pets').set(AUTH).send({})],
  ['DELETE /v1/pets 405', () => server.request.delete('/v1/pets').set(AUTH)],
  ['GET /v1/nope 404', () => server.request.get('/v1/nope').set(AUTH)],
  ['POST /graphql 200', () => server.request.post('/graphql').set(AUTH).send({ query: '{ pets { id } }' })],
  [
    'GET /graphql 200 with errors',
    () => server.request.get('/graphql?query=%7Bpet(id%3A%22-1%22)%7Bid%7D%7D').set(AUTH),
  ],
  ['POST /graphql 401', () => server.request.post('/graphql').send({ query: '{ pets { id } }' })],
];

/**
 * A GET's 200 and 304 (conditional-get.ts): a browser may keep them but must revalidate each use, and
 * no shared cache keeps them; Vary says whose they are. Chosen so that polling costs a 304, not a body.
 */
const REVALIDATED: Array<[string, () => ReturnType<typeof server.request.get>]> = [
  ['GET /v1/pets 200', () => server.request.get('/v1/pets').set(AUTH)],
  ['GET /v1/pets 304', () => server.request.get('/v1/pets').set({ ...AUTH, 'If-None-Match': '*' })],
  ['GET /graphql 200', () => server.request.get('/graphql?query=%7B__typename%7D').set(AUTH)],
  [
    'GET /graphql 304',
    () => server.request.get('/graphql?query=%7B__typename%7D').set({ ...AUTH, 'If-None-Match': '*' }),
  ],
];

/** Answers anyone may load. */
const PUBLIC: Array<[string, () => ReturnType<typeof server.request.get>]> = [
  ['/', () => server.request.get('/')],
  ['/health', () => server.request.get('/health')],
  ['/v1/openapi.json', () => server.request.get('/v1/openapi.json')],
  ['/v1/docs', () => server.request.get('/v1/docs')],
  ['/graphql in a browser', () => server.request.get('/graphql').set('Accept', 'text/html')],
];

describe('OWASP REST headers', () => {
  it.each(KEYED)('then %s carries Cache-Control: no-store and X-Content-Type-Options: nosniff', async (_name, send) => {
    const response = await send();
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  });

  it.each(REVALIDATED)(
    'then %s carries Cache-Control: private, no-cache, Vary: Authorization and nosniff',
    async (_name, send) => {
      const response = await send();
      expect([200, 304]).toContain(response.status);
      expect(response.headers['cache-control']).toBe('private, no-cache');
      expect(response.headers.vary).toMatch(/^Authorization(, Accept)?$/);
      expect(response.headers.etag).toMatch(/^"[\w-]{22}"$/);
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    },
  );

  it.each(PUBLIC)('then %s carries X-Content-Type-Options: nosniff', async (_name, send) => {
    const response = await send();
    expect(response.status).toBe(200);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  });

  it('then the pages cannot be framed', async () => {
    for (const path of ['/', '/v1/docs', '/graphql']) {
      const response = await server.request.get(path).set('Accept', 'text/html');
      expect(response.headers['content-security-policy'], path).toContain("frame-ancestors 'none'");
    }
  });
});
