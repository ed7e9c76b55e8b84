/**
 * HTTP requests generated for the fuzz suite: GraphQL by POST and GET (documents from fuzz-graphql.ts),
 * the REST contract's paths, parameters and bodies, the other routes, and the headers every client
 * may send wrongly (Accept, Content-Type, Authorization, long and odd values).
 */
import fc, { type Arbitrary } from 'fast-check';
import { graphQLDocument, graphQLVariables } from './fuzz-graphql.ts';
import { API_KEY } from './test-server.ts';

/** Mostly `usual`, one time in `oneIn` `unusual`: one mistake at a time lets most requests reach deep. */
const rarely = <T>(usual: Arbitrary<T>, unusual: Arbitrary<T>, oneIn: number): Arbitrary<T> =>
  fc.oneof({ weight: oneIn - 1, arbitrary: usual }, { weight: 1, arbitrary: unusual });

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** What node:http lets a client send in a header value: tab, visible ASCII, space and Latin-1. */
const headerText = (maxLength: number) =>
  fc
    .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.constant(0x09), fc.integer({ min: 0x80, max: 0xff })), {
      maxLength,
    })
    .map((codes) => String.fromCharCode(...codes).trim());

const authorization = fc.oneof(
  { weight: 40, arbitrary: fc.constant(`Bearer ${API_KEY}`) },
  { weight: 1, arbitrary: fc.constant(`bearer ${API_KEY}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('Bearer wrong-key', 'Basic dXNlcjpwYXNz', 'Bearer', '', `Bearer ${API_KEY}x`),
  },
  { weight: 1, arbitrary: headerText(40).map((text) => `Bearer ${text}`) },
  { weight: 1, arbitrary: fc.constant(`Bearer ${'k'.repeat(4000)}`) },
);

const ACCEPTS = [
  'application/json',
  'application/graphql-response+json',
  '*/*',
  'text/html',
  'text/event-stream',
  'multipart/mixed',
  'application/json; charset=latin1',
  'application/*;q=0',
  'image/png',
  '',
];
const accept = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...ACCEPTS) },
  { weight: 1, arbitrary: fc.subarray(ACCEPTS, { minLength: 2 }).map((list) => list.join(', ')) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 600 }).map((n) => Array.from({ length: n }, (_, i) => `x/y${i}`).join(',')),
  },
  { weight: 1, arbitrary: headerText(30) },
);

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/graphql',
  'application/graphql-response+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'text/plain',
  'application/json;;;',
];
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: headerText(60) },
);

/** Headers any request may carry besides those above; most requests carry none of them. */
const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'x-request-id',
    'idempotency-key',
    'if-none-match',
    'accept-encoding',
    'x-forwarded-for',
    'user-agent',
    'x-custom',
  ),
  fc.oneof(headerText(40), fc.constant('z'.repeat(6000))),
  { maxKeys: 2 },
);

function withHeaders(base: Arbitrary<Omit<FuzzRequest, 'headers'> & { json?: boolean }>): Arbitrary<FuzzRequest> {
  const noHeader = fc.constant(undefined);
  return fc
    .tuple(
      base,
      rarely(fc.constant(`Bearer ${API_KEY}`), rarely(authorization, noHeader, 10), 6),
      rarely(noHeader, accept, 6),
      contentType,
      rarely(fc.constant(true), fc.constant(false), 12),
      rarely(fc.constant({}), extraHeaders, 4),
    )
    .map(([request, auth, accepted, type, typeIsRight, extra]) => {
      const headers: Record<string, string> = { ...extra };
      if (auth !== undefined) headers.authorization = auth;
      if (accepted !== undefined) headers.accept = accepted;
      if (request.body) headers['content-type'] = request.json && typeIsRight ? 'application/json' : type;
      return { method: request.method, path: request.path, headers, ...(request.body ? { body: request.body } : {}) };
    });
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

const graphQLBody = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record(
      {
        query: graphQLDocument,
        variables: graphQLVariables,
        operationName: fc.constantFrom(null, null, null, 'Q', 'Other'),
      },
      { requiredKeys: ['query'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      { query: fc.jsonValue({ maxDepth: 1 }), extensions: fc.jsonValue({ maxDepth: 2 }), documentId: fc.string() },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
const junkBytes = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
  fc.constant(Buffer.from('{"query":')),
);

const graphQLPost = fc
  .oneof(
    { weight: 6, arbitrary: graphQLBody.map((body) => ({ body: json(body), json: true })) },
    { weight: 1, arbitrary: junkBytes.map((body) => ({ body, json: false })) },
  )
  .map((parts) => ({ method: 'POST', path: '/graphql', ...parts }));

/** A GET's extra parameters: now and then one that is wrong, or not JSON, or both a document and an id. */
const getExtras = rarely(
  fc.constant({}),
  fc.record(
    {
      variables: fc.constantFrom('x', '{', '[1]', 'null', ''),
      operationName: fc.constantFrom('Q', 'Other', ''),
      extensions: fc.constantFrom('{}', 'x', '{"persistedQuery":{"version":1,"sha256Hash":"abc"}}', '1'),
      documentId: fc.constantFrom('sha256:abc', 'x', ''),
    },
    { requiredKeys: [] },
  ),
  5,
);
const graphQLGet = fc
  .tuple(graphQLDocument, rarely(graphQLVariables, fc.constant(undefined), 3), getExtras)
  .map(([query, variables, extras]) => {
    const params = new URLSearchParams({ query, ...extras });
    if (variables !== undefined && !params.has('variables')) params.set('variables', JSON.stringify(variables));
    return { method: 'GET', path: `/graphql?${params}` };
  });

const PET_IDS = [
  '1',
  '2',
  '0',
  '-1',
  '1e3',
  '9007199254740993',
  '99999999999999999999',
  '%00',
  '%ZZ',
  'abc',
  '%F0%9F%90%95',
  '1.5',
  ' 1',
  'constructor',
];
const petId = fc.oneof(fc.constantFrom(...PET_IDS), fc.nat({ max: 300 }).map(String));
const listQuery = fc
  .dictionary(
    fc.constantFrom('limit', 'status', 'cursor', 'other', '__proto__', 'constructor'),
    fc.oneof(fc.constantFrom('1', '100', '101', '0', '-5', 'available', 'SOLD', 'x', ''), fc.string({ maxLength: 12 })),
    { maxKeys: 3 },
  )
  .map((params) => new URLSearchParams(params).toString());

/** Objects with keys every object inherits, as JSON.parse makes them: own properties, never prototypes. */
const PROTOTYPE_NAMED: unknown[] = [
  '{"name":"x","categoryId":1,"__proto__":{"status":"sold"}}',
  '{"__proto__":{"name":"x","categoryId":1}}',
  '{"name":"x","categoryId":1,"constructor":{"name":"y"},"toString":1}',
  '{"name":"x","categoryId":1,"status":"constructor"}',
].map((text) => JSON.parse(text));

const newPet = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        name: fc.string({ unit: 'binary', maxLength: 20 }),
        categoryId: fc.integer({ min: -1, max: 5 }),
        status: fc.constantFrom('available', 'sold', 'SOLD', null),
      },
      { requiredKeys: ['name'] },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_NAMED) },
);

const rest = fc.oneof(
  { weight: 4, arbitrary: listQuery.map((query) => ({ method: 'GET', path: `/v1/pets${query ? `?${query}` : ''}` })) },
  { weight: 3, arbitrary: petId.map((id) => ({ method: 'GET', path: `/v1/pets/${id}` })) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        newPet.map((pet) => ({ body: json(pet), json: true })),
        junkBytes.map((body) => ({ body, json: false })),
      )
      .map((parts) => ({ method: 'POST', path: '/v1/pets', ...parts })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE'),
        fc.constantFrom('/v1/pets', '/v1/pets/1', '/graphql'),
      )
      .map(([method, path]) => ({ method, path })),
  },
);

const OTHER_PATHS = [
  '/',
  '/health',
  '/ready',
  '/metrics',
  '/favicon.ico',
  '/v1/openapi.json',
  '/v1/docs',
  '/assets/constructor',
  '/assets/__proto__',
  '/assets/x.js',
  '/assets/',
  '/v1',
  '/v1/',
  '//v1/pets',
  '/v1/pets/',
  '/graphql/',
  '/GRAPHQL',
  '/%2e%2e/package.json',
  '/assets/..%2fpackage.json',
];
const other = fc
  .oneof(
    fc.constantFrom(...OTHER_PATHS),
    fc.string({ maxLength: 20 }).map((text) => `/${encodeURIComponent(text)}`),
  )
  .map((path) => ({ method: 'GET', path }));

/** One request of any kind, as a client may send it. */
export const fuzzRequest: Arbitrary<FuzzRequest> = withHeaders(
  fc.oneof(
    { weight: 6, arbitrary: graphQLPost },
    { weight: 3, arbitrary: graphQLGet },
    { weight: 5, arbitrary: rest },
    { weight: 1, arbitrary: other },
  ),
);

/** Whole requests as bytes, for what no HTTP client would send: malformed lines, headers and framing. */
export const rawJunk: Arbitrary<Buffer> = fc
  .oneof(
    fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
    fc.constantFrom(
      'GET / HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /health\r\n\r\n',
      'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
      'POST /graphql HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
      'GET /\u0000 HTTP/1.1\r\nHost: x\r\n\r\n',
      `GET / HTTP/1.1\r\nHost: x\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`,
      `GET / HTTP/1.1\r\n${'X-A: b\r\n'.repeat(3000)}\r\n`,
      'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      `POST /graphql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n{"query":"{ __typename }"}GET / HTTP/1.1\r\n\r\n`,
    ),
    fc
      .tuple(
        fc.constantFrom('GET', 'POST', 'BREW', 'G\u00c9T', ''),
        fc.string({ unit: 'binary', maxLength: 30 }),
        fc.string({ unit: 'binary', maxLength: 30 }),
      )
      .map(([method, target, header]) => `${method} /${target} HTTP/1.1\r\nHost: x\r\nX: ${header}\r\n\r\n`),
  )
  .map((value) => (typeof value === 'string' ? Buffer.from(value, 'latin1') : value));
