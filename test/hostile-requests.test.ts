import { randomUUID } from 'node:crypto';
import { type IncomingHttpHeaders, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { capturingLogger, ERROR_LEVEL, type LogLine, linesDuring } from './support/capturing-logger.ts';
import { executeGraphQL } from './support/graphql-client.ts';
import { PetsDocument } from './support/operations.ts';
import { abortMidBody } from './support/raw-socket.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const { logger, lines } = capturingLogger();
const server = useTestServer({ logger });

const errorLines = (logged: readonly LogLine[]) => logged.filter((line) => line.level >= ERROR_LEVEL);

/** An answer as node:http read it, with no limit on the size of its headers (the size is what is measured). */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** Bytes of the header block: names, values and their separators. */
  headerBytes: number;
  text: string;
}

function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${server.baseUrl}${path}`, { method, headers, maxHeaderSize: 4 * 1024 * 1024 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (part: string) => {
        text += part;
      });
      res.on('end', () => {
        const headerBytes = res.rawHeaders.reduce((sum, part) => sum + Buffer.byteLength(part) + 2, 0);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, headerBytes, text });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The answer and the log lines of its request, with headers as linesDuring reads them. */
async function sendLogged(method: string, path: string, headers: Record<string, string>, body?: string) {
  const { response, logged } = await linesDuring(lines, async () => {
    const answer = await send(method, path, headers, body);
    return { ...answer, headers: answer.headers as Record<string, string | undefined> };
  });
  return { answer: response, logged };
}

describe('static assets by a name every object has (constructor, __proto__, toString)', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'GET /assets/%s answers 404 ROUTE_NOT_FOUND and logs no error',
    async (name) => {
      const { answer, logged } = await sendLogged('GET', `/assets/${name}`, {});
      expect(answer.status, answer.text).toBe(404);
      expect(JSON.parse(answer.text)).toMatchObject({ code: 'ROUTE_NOT_FOUND', status: 404 });
      expect(errorLines(logged)).toEqual([]);
    },
  );
});

describe('GraphQL parameters in a URL that are not JSON', () => {
  const typename = `query=${encodeURIComponent('{ __typename }')}`;
  it.each([
    ['variables=x', 'application/json'],
    ['extensions=x', 'application/json'],
    ['variables=%7B', 'application/graphql-response+json'],
    ['extensions=%7Bnope', 'application/graphql-response+json'],
  ])(
    'GET /graphql?…&%s (Accept: %s) answers 400 BAD_REQUEST naming the parameter, and logs no error',
    async (part, accept) => {
      const { answer, logged } = await sendLogged('GET', `/graphql?${typename}&${part}`, { ...AUTH, Accept: accept });
      expect(answer.status, answer.text).toBe(400);
      const body = JSON.parse(answer.text);
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0].extensions).toEqual({ code: 'BAD_REQUEST' });
      expect(body.errors[0].message).toContain(`"${part.split('=')[0]}"`);
      expect(errorLines(logged)).toEqual([]);
    },
  );

  it('a URL-encoded POST body with variables that are not JSON answers 400 BAD_REQUEST too', async () => {
    const form = { ...AUTH, 'Content-Type': 'application/x-www-form-urlencoded' };
    const { answer, logged } = await sendLogged('POST', '/graphql', form, `${typename}&variables=x`);
    expect(answer.status, answer.text).toBe(400);
    expect(JSON.parse(answer.text).errors[0].extensions).toEqual({ code: 'BAD_REQUEST' });
    expect(errorLines(logged)).toEqual([]);
  });

  it('while JSON variables by GET still run', async () => {
    const variables = encodeURIComponent(JSON.stringify({ limit: 1 }));
    const query = encodeURIComponent('query ($limit: Int) { pets(limit: $limit) { id } }');
    const answer = await send('GET', `/graphql?query=${query}&variables=${variables}`, AUTH);
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ data: { pets: expect.any(Array) } });
  });
});

describe('an Accept header that names no type /graphql answers in', () => {
  const unknownTypes = (count: number) => Array.from({ length: count }, (_, index) => `x/y${index}`).join(',');
  const query = `/graphql?query=${encodeURIComponent('{ __typename }')}`;

  it('gets 406 NOT_ACCEPTABLE whose size does not grow with the header (5 types or 2,000)', async () => {
    const few = await send('GET', query, { ...AUTH, Accept: unknownTypes(5) });
    const many = await send('GET', query, { ...AUTH, Accept: unknownTypes(2_000) });
    for (const answer of [few, many]) {
      expect(answer.status, answer.text).toBe(406);
      expect(JSON.parse(answer.text).errors[0].extensions).toEqual({ code: 'NOT_ACCEPTABLE' });
      expect(answer.headers.accept).toBe(
        'text/event-stream, multipart/mixed, application/graphql-response+json, application/json',
      );
    }
    // The request id and the rate-limit counter may differ by a few bytes; nothing else may.
    expect(Math.abs(many.headerBytes - few.headerBytes)).toBeLessThan(16);
    expect(many.text.length).toBe(few.text.length);
  });

  it('stores nothing when the request was a mutation (Yoga would run it, then answer 406)', async () => {
    const name = `not-acceptable-${randomUUID()}`;
    const mutation = JSON.stringify({
      query: `mutation { createPet(input: { name: "${name}", categoryId: 1 }) { id } }`,
    });
    const json = { ...AUTH, 'Content-Type': 'application/json' };
    const answer = await send('POST', '/graphql', { ...json, Accept: 'text/html' }, mutation);
    expect(answer.status, answer.text).toBe(406);
    const listed = await executeGraphQL(server, PetsDocument, { limit: 100 });
    expect(JSON.stringify(listed.body)).not.toContain(name);
  });

  it('is served when one of its types is one /graphql answers in, however many others come first', async () => {
    const answer = await send('GET', query, { ...AUTH, Accept: `${unknownTypes(500)},application/json` });
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('a POST /graphql body in a media type Yoga does not read', () => {
  it.each(['multipart/form-data; boundary=x', 'text/plain', 'application/graphql-response+json', 'Application/JSON'])(
    'Content-Type %s gets 415 UNSUPPORTED_MEDIA_TYPE in a GraphQL body (Yoga answers an empty 415)',
    async (contentType) => {
      const answer = await send(
        'POST',
        '/graphql',
        { ...AUTH, 'Content-Type': contentType },
        '{"query":"{ __typename }"}',
      );
      expect(answer.status, answer.text).toBe(415);
      expect(answer.headers['content-type']).toContain('application/json');
      expect(JSON.parse(answer.text).errors[0].extensions).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    },
  );

  it.each([
    ['application/json', '{"query":"{ __typename }"}'],
    ['application/json; charset=utf-8', '{"query":"{ __typename }"}'],
    ['application/graphql', '{ __typename }'],
    ['application/x-www-form-urlencoded', 'query=%7B__typename%7D'],
  ])('while Content-Type %s is still served', async (contentType, body) => {
    const answer = await send('POST', '/graphql', { ...AUTH, 'Content-Type': contentType }, body);
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('a REST body whose Content-Type is long', () => {
  it('gets 415 UNSUPPORTED_MEDIA_TYPE that quotes a bounded part of it, the same size for 2,000 or 6,000 characters', async () => {
    const post = (length: number) =>
      send('POST', '/v1/pets', { ...AUTH, 'Content-Type': 'a'.repeat(length) }, '{"name":"Rex","categoryId":1}');
    const [short, long] = [await post(2_000), await post(6_000)];
    for (const answer of [short, long]) {
      expect(answer.status, answer.text).toBe(415);
      expect(JSON.parse(answer.text)).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 });
    }
    expect(long.text.length).toBe(short.text.length);
    expect(short.text.length).toBeLessThan(300);
  });
});

describe('a client that sends half its body and hangs up', () => {
  it.each([
    ['/graphql', '{"query":"{ __typename }"'],
    ['/v1/pets', '{"name":"Half'],
  ])('POST %s is logged at info (its access line), without a stack, and no error line', async (path, half) => {
    const reqId = `abort-${randomUUID()}`;
    const from = lines.length;
    const headers = { ...AUTH, 'Content-Type': 'application/json', 'X-Request-Id': reqId };
    await abortMidBody(server.baseUrl, { path, headers, body: half });
    const ofRequest = () => lines.slice(from).filter((line) => line.reqId === reqId);
    const abortLine = () => ofRequest().find((line) => String(line.msg).includes('client closed'));
    await expect.poll(abortLine).toBeDefined();
    expect(abortLine()).toMatchObject({ level: 30, url: path });
    expect(JSON.stringify(ofRequest())).not.toContain('stack');
    expect(errorLines(lines.slice(from))).toEqual([]);
  });
});

describe('HEAD on /graphql', () => {
  const query = `/graphql?query=${encodeURIComponent('{ __typename }')}`;

  it('answers 405 with an Allow that does not name HEAD, as every 405 on /graphql says', async () => {
    const head = await send('HEAD', query, AUTH);
    const del = await send('DELETE', '/graphql', AUTH);
    expect(head.status).toBe(405);
    expect(del.status).toBe(405);
    expect(head.headers.allow).toBe('GET, POST');
    expect(del.headers.allow).toBe('GET, POST');
    expect(JSON.parse(del.text).errors[0].extensions).toEqual({ code: 'METHOD_NOT_ALLOWED' });
  });

  it('while HEAD of the GraphiQL page (a browser asking for HTML) is still served', async () => {
    const page = await send('HEAD', '/graphql', { Accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
  });
});
