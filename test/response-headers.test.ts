import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { AUTH, useTestServer } from './support/test-server.ts';

const server = useTestServer();

interface Raw {
  status: number;
  /** Each header line as sent, in order: [name, value]. */
  lines: [string, string][];
}

/** One request with node:http, which keeps every header line apart (clients join repeats). */
function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${server.baseUrl}${path}`, { method, headers, timeout: 10_000 }, (response) => {
      const lines: [string, string][] = [];
      for (let i = 0; i < response.rawHeaders.length; i += 2) {
        lines.push([response.rawHeaders[i] as string, response.rawHeaders[i + 1] as string]);
      }
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, lines }));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const JSON_BODY = { ...AUTH, 'Content-Type': 'application/json' };
const query = (document: string) => JSON.stringify({ query: document });

/** Answers from every kind of writer: REST's, the edge's errors, Yoga, the GraphQL fast path, pages, metrics. */
const ANSWERS: Array<[string, () => Promise<Raw>]> = [
  ['REST list 200', () => send('GET', '/v1/pets?limit=1', AUTH)],
  ['REST list 304', () => send('GET', '/v1/pets?limit=1', { ...AUTH, 'If-None-Match': '*' })],
  ['REST deprecated get 404', () => send('GET', '/v1/pets/987654321', AUTH)],
  ['REST create 201', () => send('POST', '/v1/pets', JSON_BODY, JSON.stringify({ name: 'Once', categoryId: 1 }))],
  ['REST create 400', () => send('POST', '/v1/pets', JSON_BODY, '{}')],
  ['REST 401', () => send('GET', '/v1/pets')],
  ['REST 405', () => send('DELETE', '/v1/pets', AUTH)],
  ['REST 404 route', () => send('GET', '/v1/nope', AUTH)],
  ['GraphQL by Yoga', () => send('POST', '/graphql', JSON_BODY, query('{ pets(limit: 1) { id name } }'))],
  ['GraphQL fast path', () => send('POST', '/graphql', JSON_BODY, query('{ pets(limit: 1) { id name } }'))],
  [
    'GraphQL GET 304 by Yoga',
    () => send('GET', '/graphql?query=%7Bpets(limit%3A1)%7Bid%7D%7D', { ...AUTH, 'If-None-Match': '*' }),
  ],
  [
    'GraphQL GET 304 by the fast path',
    () => send('GET', '/graphql?query=%7Bpets(limit%3A1)%7Bid%7D%7D', { ...AUTH, 'If-None-Match': '*' }),
  ],
  ['GraphQL 401', () => send('POST', '/graphql', { 'Content-Type': 'application/json' }, query('{ pets { id } }'))],
  ['GraphiQL page', () => send('GET', '/graphql', { Accept: 'text/html' })],
  ['front door', () => send('GET', '/')],
  ['health', () => send('GET', '/health')],
  ['OpenAPI document', () => send('GET', '/v1/openapi.json')],
  ['metrics', () => send('GET', '/metrics')],
];

describe('every answer carries each header once, the edge’s own among them', () => {
  it.each(ANSWERS)('%s', async (_name, answer) => {
    const { status, lines } = await answer();
    expect(status).toBeGreaterThanOrEqual(200);
    const names = lines.map(([name]) => name.toLowerCase());
    expect(
      names.filter((name, index) => names.indexOf(name) !== index),
      'headers sent twice',
    ).toEqual([]);
    expect(names).toContain('x-request-id');
    expect(lines.find(([name]) => name.toLowerCase() === 'x-content-type-options')?.[1]).toBe('nosniff');
  });

  it('a REST answer carries the edge’s headers with its own, the rate-limit fields and the deprecation ones', async () => {
    const { lines } = await send('GET', '/v1/pets/987654321', AUTH);
    const sent = new Map(lines.map(([name, value]) => [name.toLowerCase(), value]));
    expect(sent.get('cache-control')).toBe('no-store');
    expect(sent.get('ratelimit-policy')).toMatch(/^"default";q=\d+;w=1$/);
    expect(sent.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
    expect(sent.get('deprecation')).toMatch(/^@\d+$/);
    expect(sent.get('content-type')).toBe('application/json; charset=utf-8');
  });
});
