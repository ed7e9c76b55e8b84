import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LinkHeaderError,
  MAX_LINK_HEADER_LENGTH,
  nextPageUrl,
  parseLinkHeader,
} from '../examples/rest-client/src/link-header.ts';
import { createRestClient, type Pet, type RestClient } from '../examples/rest-client/src/rest-client.ts';
import { RestClientError } from '../examples/rest-client/src/rest-client-error.ts';
import { API_KEY, startTestServer, type TestServer } from './support/test-server.ts';

const LIST = 'https://api.example/v1/pets';
const PAGE = `${LIST}?limit=2`;

describe('the rest-client example: reading Link headers', () => {
  it('reads every link, quoted or bare parameters, several relation types, commas inside quotes', () => {
    const header = '<https://a.example/x>; title="a, b; \\"c\\""; rel="prev NEXT", </y>;rel=last,, <z>';
    expect(parseLinkHeader(header)).toEqual([
      { target: 'https://a.example/x', rel: ['prev', 'next'] },
      { target: '/y', rel: ['last'] },
      { target: 'z', rel: [] },
    ]);
  });

  it('resolves the next link against the page that named it, and finds none on the last page', () => {
    expect(String(nextPageUrl('</v1/pets?limit=2&cursor=cGV0OjI>; rel="next"', PAGE, LIST))).toBe(
      `${LIST}?limit=2&cursor=cGV0OjI`,
    );
    expect(nextPageUrl('</v1/pets?cursor=a>; rel="next"; rel="prev"', PAGE, LIST)?.search).toBe('?cursor=a');
    expect(nextPageUrl(null, PAGE, LIST)).toBeUndefined();
    expect(nextPageUrl('</v1/openapi.json>; rel="deprecation"', PAGE, LIST)).toBeUndefined();
  });

  it.each([
    ['another host', '<https://evil.example/v1/pets?cursor=a>; rel="next"'],
    ['a scheme-relative host', '<//evil.example/v1/pets?cursor=a>; rel="next"'],
    ['another scheme', '<http://api.example/v1/pets?cursor=a>; rel="next"'],
    ['another port', '<https://api.example:8443/v1/pets?cursor=a>; rel="next"'],
    ['another path', '</v1/pets/../openapi.json?cursor=a>; rel="next"'],
  ])('refuses, never follows, a next link to %s', (_, header) => {
    expect(() => nextPageUrl(header, PAGE, LIST)).toThrow(/not following a next-page link away from/);
  });

  it.each([
    ['no target', 'rel="next"'],
    ['an unclosed target', '</v1/pets; rel="next"'],
    ['an unterminated quoted string', '</v1/pets>; rel="next'],
    ['a parameter without a name', '</v1/pets>; ="next"'],
  ])('refuses a header with %s as malformed', (_, header) => {
    expect(() => parseLinkHeader(header)).toThrow(LinkHeaderError);
  });

  it('refuses a header over the length cap unread, and reads one at the cap', () => {
    const filler = ';a'.repeat((MAX_LINK_HEADER_LENGTH - 8) / 2);
    const atCap = `</x>${filler};b=c`.padEnd(MAX_LINK_HEADER_LENGTH, ' ');
    expect(parseLinkHeader(atCap)).toEqual([{ target: '/x', rel: [] }]);
    expect(() => parseLinkHeader(`${atCap} `)).toThrow(/at most 8192 read/);
  });

  it('stops listing, without sending the key anywhere, when a page links to another host', async () => {
    const sent: Request[] = [];
    const fetch = async (request: Request) => {
      sent.push(request);
      const link = '<https://evil.example/v1/pets?cursor=a>; rel="next"';
      return Response.json([{ id: 1, name: 'Rex', categoryId: 1 }], { headers: { Link: link } });
    };
    const client = createRestClient({ baseUrl: 'https://api.example/v1/', apiKey: 'k', fetch });
    const pages: Pet[][] = [];
    const listing = (async () => {
      for await (const page of client.listPetPages({ limit: 1 })) pages.push(page);
    })();
    await expect(listing).rejects.toThrow(LinkHeaderError);
    expect(pages).toHaveLength(1);
    expect(sent.map((request) => request.url)).toEqual(['https://api.example/v1/pets?limit=1']);
  });
});

interface Exchange {
  request: Request;
  link: string | null;
}

/** A refusal the client threw, for its typed fields. */
async function refusalOf(pending: Promise<unknown>): Promise<RestClientError> {
  const thrown = await pending.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(thrown).toBeInstanceOf(RestClientError);
  return thrown as RestClientError;
}

async function collect(pages: AsyncIterable<Pet[]>, into: Pet[][] = []): Promise<Pet[][]> {
  for await (const page of pages) into.push(page);
  return into;
}

describe('the rest-client example against the service', () => {
  let server: TestServer;
  let baseUrl: string;
  const exchanges: Exchange[] = [];
  let client: RestClient;
  const created: Pet[] = [];

  const recordingFetch = async (request: Request) => {
    const response = await fetch(request);
    exchanges.push({ request, link: response.headers.get('Link') });
    return response;
  };

  beforeAll(async () => {
    server = await startTestServer();
    baseUrl = `${server.baseUrl}${server.restBasePath}`;
    client = createRestClient({ baseUrl, apiKey: API_KEY, fetch: recordingFetch });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('creates pets, each with the key and an Idempotency-Key of its own', async () => {
    const names = ['Ada', 'Bo', 'Cy', 'Di', 'Ed'];
    for (const [index, name] of names.entries()) {
      created.push(await client.createPet({ name, categoryId: index + 1, status: 'available' }));
    }
    expect(created.map(({ name }) => name)).toEqual(names);
    const creates = exchanges.map(({ request }) => request);
    expect(creates.map((request) => request.headers.get('Authorization'))).toEqual(
      names.map(() => `Bearer ${API_KEY}`),
    );
    const keys = creates.map((request) => request.headers.get('Idempotency-Key'));
    for (const key of keys)
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).toBe(names.length);
  });

  it('stores a retried create once when it is given the same Idempotency-Key', async () => {
    const idempotencyKey = crypto.randomUUID();
    const first = await client.createPet({ name: 'Once', categoryId: 9 }, { idempotencyKey });
    expect(await client.createPet({ name: 'Once', categoryId: 9 }, { idempotencyKey })).toEqual(first);
    created.push(first);
  });

  it('lists every pet across pages, following each Link as the service wrote it', async () => {
    exchanges.length = 0;
    const pages = await collect(client.listPetPages({ limit: 2 }));
    expect(pages.map((page) => page.length)).toEqual([2, 2, 2]);
    expect(pages.flat()).toEqual(created);
    expect(exchanges).toHaveLength(3);
    for (const [index, { request }] of exchanges.entries()) {
      const linkedBy = exchanges[index - 1]?.link;
      const expected = linkedBy ? new URL(/^<([^>]*)>/.exec(linkedBy)![1]!, baseUrl).href : `${baseUrl}/pets?limit=2`;
      expect(request.url).toBe(expected);
    }
    expect(exchanges.at(-1)!.link).toBeNull();
  });

  it('keeps the status filter on every page, as the links carry it', async () => {
    const pages = await collect(client.listPetPages({ limit: 2, status: 'available' }));
    expect(pages.flat()).toEqual(created.filter(({ status }) => status === 'available'));
  });

  it('gives up past maxPages instead of following links without end', async () => {
    const bounded = createRestClient({ baseUrl, apiKey: API_KEY, maxPages: 2 });
    const pages: Pet[][] = [];
    await expect(collect(bounded.listPetPages({ limit: 2 }), pages)).rejects.toThrow(/stopped after 2 pages/);
    expect(pages.flat()).toEqual(created.slice(0, 4));
  });

  it('gets one pet by id', async () => {
    const [, second] = created;
    expect(await client.getPet(second!.id)).toEqual(second);
  });

  it('throws a typed 400 naming the invalid field for a bad body, and stores nothing', async () => {
    const error = await refusalOf(client.createPet({ name: ' ', categoryId: 1 }));
    expect(error).toMatchObject({ status: 400, code: 'BAD_USER_INPUT' });
    expect(error.body?.status).toBe(400);
    expect(error.body?.message).toContain('"name"');
    expect((await collect(client.listPetPages({ limit: 100 }))).flat()).toEqual(created);
  });

  it('throws a typed 401 for a missing key and for a wrong one', async () => {
    const dropKey = (request: Request) => {
      request.headers.delete('Authorization');
      return fetch(request);
    };
    const keyless = createRestClient({ baseUrl, apiKey: API_KEY, fetch: dropKey });
    const wrongKey = createRestClient({ baseUrl, apiKey: 'not-a-key-of-this-service' });
    for (const pending of [collect(keyless.listPetPages()), wrongKey.getPet(created[0]!.id)]) {
      const error = await refusalOf(pending);
      expect(error).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
      expect(error.body?.status).toBe(401);
    }
  });

  it('throws a typed 404 for an unknown id', async () => {
    const unknownId = Math.max(...created.map(({ id }) => id)) + 1000;
    const error = await refusalOf(client.getPet(unknownId));
    expect(error).toMatchObject({ status: 404, code: 'PET_NOT_FOUND' });
    expect(error.body?.message).toContain(String(unknownId));
  });

  it('runs main.ts: creates, reads back and lists with the key, exits 2 without one', async () => {
    const run = promisify(execFile);
    const env = { ...process.env, PETSTORE_URL: baseUrl, PETSTORE_API_KEY: API_KEY };
    const { stdout } = await run('npx', ['tsx', 'examples/rest-client/src/main.ts'], { env, timeout: 30_000 });
    expect(stdout).toMatch(/listed (\d+) pets/);
    expect(Number(/listed (\d+) pets/.exec(stdout)![1])).toBe(created.length + 2);
    const keyless = run('npx', ['tsx', 'examples/rest-client/src/main.ts'], {
      env: { ...env, PETSTORE_API_KEY: '' },
      timeout: 30_000,
    });
    await expect(keyless).rejects.toMatchObject({ code: 2 });
  });
});

describe('the rest-client example over the rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    const generous = { rate: 1_000_000, burst: 1_000_000 };
    server = await startTestServer({ rateLimits: { perKey: { rate: 1, burst: 1 }, authFailures: generous } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('throws a typed 429 with Retry-After in seconds', async () => {
    const client = createRestClient({ baseUrl: `${server.baseUrl}${server.restBasePath}`, apiKey: API_KEY });
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((id) => client.getPet(id)));
    const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    const limited = refusals.filter((error) => error instanceof RestClientError && error.status === 429);
    expect(limited.length, String(refusals)).toBeGreaterThan(0);
    for (const error of limited) {
      expect(error).toMatchObject({ code: 'RATE_LIMITED', body: { status: 429 } });
      expect(error.retryAfterSeconds).toBeGreaterThan(0);
    }
  });
});
