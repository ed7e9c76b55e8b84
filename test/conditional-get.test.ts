import { describe, expect, it } from 'vitest';
import { entityTagOf, ifNoneMatchNames, MOST_COMPARED_TAGS } from '../src/http/conditional-get.ts';
import { API_KEY, AUTH, OTHER_API_KEY, type TestServer, useTestServer } from './support/test-server.ts';

const TAG = /^"[A-Za-z0-9_-]{22}"$/;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const remaining = (field: unknown) => Number(/;r=(\d+);/.exec(String(field))?.[1]);

function get(server: TestServer, path: string, headers: Record<string, string> = AUTH) {
  return server.request.get(path).set(headers);
}

/** Both validators' headers, as a 200 and its 304 must carry them alike. */
function expectRevalidated(response: { headers: Record<string, string | string[] | undefined> }, vary: string) {
  expect(response.headers.etag).toMatch(TAG);
  expect(response.headers['cache-control']).toBe('private, no-cache');
  expect(response.headers.vary).toBe(vary);
}

function expectNotModified(response: { status: number; text: string; headers: Record<string, unknown> }) {
  expect(response.status).toBe(304);
  expect(response.text ?? '').toBe('');
  expect(response.headers['content-length']).toBeUndefined();
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['ratelimit-policy']).toMatch(/^"default";q=\d+;w=1$/);
}

describe('If-None-Match as RFC 9110 reads it (weak comparison, bounded)', () => {
  const tag = entityTagOf('application/json; charset=utf-8', '[]');

  it('names the tag: alone, weak, in a list, after a tag holding a comma, or as *', () => {
    expect(tag).toMatch(TAG);
    for (const header of [tag, `W/${tag}`, `"other", ${tag}`, `"a,b",${tag}`, ` ,, ${tag} ,`, '*', ' * ']) {
      expect(ifNoneMatchNames(header, tag), header).toBe(true);
    }
  });

  it('does not name it: absent, another tag, a prefix of it, unquoted, lower-case w/, or malformed before it', () => {
    const bare = tag.slice(1, -1);
    const cases = [undefined, '', '"other"', `${tag.slice(0, -2)}"`, bare, `w/${tag}`, `"open, ${tag}`, `x ${tag}`];
    for (const header of cases) expect(ifNoneMatchNames(header, tag), String(header)).toBe(false);
  });

  it('reads at most MOST_COMPARED_TAGS tags: a hostile list costs its size and no more, and the answer is a full one', () => {
    const before = Array.from({ length: MOST_COMPARED_TAGS }, (_, index) => `"t${index}"`).join(', ');
    expect(ifNoneMatchNames(`${before}, ${tag}`, tag)).toBe(false);
    const huge = `${'"x", '.repeat(200_000)}${tag}`;
    const started = performance.now();
    expect(ifNoneMatchNames(huge, tag)).toBe(false);
    expect(ifNoneMatchNames(`"${'y'.repeat(1_000_000)}`, tag)).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('gives a different tag to the same body in another media type, with a Link, and to a body one byte apart', () => {
    expect(entityTagOf('application/graphql-response+json; charset=utf-8', '[]')).not.toBe(tag);
    expect(entityTagOf('application/json; charset=utf-8', '[ ]')).not.toBe(tag);
    const linked = entityTagOf('application/json; charset=utf-8', '[]', { Link: '</v1/pets?cursor=a>; rel="next"' });
    expect(linked).toMatch(TAG);
    expect(linked).not.toBe(tag);
    // The parts stay apart: a header line moved into the body is another representation.
    expect(entityTagOf('application/json; charset=utf-8', 'Link: x\n\n[]')).not.toBe(
      entityTagOf('application/json; charset=utf-8', '[]', { Link: 'x' }),
    );
  });
});

describe('conditional REST GETs', () => {
  const server = useTestServer();

  it('when a client polls a page with the ETag it got, then 304 with no body; once the page changes, 200 with a new tag', async () => {
    const url = '/v1/pets?limit=100&status=pending';
    const first = await get(server, url);
    expect(first.status).toBe(200);
    expectRevalidated(first, 'Authorization');
    const etag = String(first.headers.etag);

    const again = await get(server, url, { ...AUTH, 'If-None-Match': etag });
    expectNotModified(again);
    expectRevalidated(again, 'Authorization');
    expect(again.headers.etag).toBe(etag);
    expect(again.headers['content-type']).toBeUndefined();

    const created = await server.request
      .post('/v1/pets')
      .set(AUTH)
      .send({ name: 'Poll', categoryId: 1, status: 'pending' });
    expect(created.status).toBe(201);
    expect(created.headers.etag).toBeUndefined();
    expect(created.headers['cache-control']).toBe('no-store');
    const changed = await get(server, url, { ...AUTH, 'If-None-Match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.body.map((pet: { name: string }) => pet.name)).toContain('Poll');
  });

  it('when the last page is full and a pet is added after it, then the old tag gets 200, a new tag and a Link', async () => {
    const limit = 2;
    const newSold = () =>
      server.request.post('/v1/pets').set(AUTH).send({ name: 'Tail', categoryId: 3, status: 'sold' });
    const nextOf = (link: unknown) => /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];
    // Walk to the last page; add pets until it is full (a new pet comes last: ids ascend).
    let url = `/v1/pets?limit=${limit}&status=sold`;
    let page = await get(server, url);
    for (let next = nextOf(page.headers.link); next !== undefined; next = nextOf(page.headers.link)) {
      url = next;
      page = await get(server, url);
    }
    while (page.body.length < limit) {
      expect((await newSold()).status).toBe(201);
      page = await get(server, url);
    }
    expect(page.status).toBe(200);
    expect(page.headers.link).toBeUndefined();
    const etag = String(page.headers.etag);
    expectNotModified(await get(server, url, { ...AUTH, 'If-None-Match': etag }));

    expect((await newSold()).status).toBe(201);
    const polled = await get(server, url, { ...AUTH, 'If-None-Match': etag });
    expect(polled.status).toBe(200);
    expect(polled.body).toEqual(page.body);
    expect(polled.headers.etag).toMatch(TAG);
    expect(polled.headers.etag).not.toBe(etag);
    const next = nextOf(polled.headers.link);
    expect(next).toContain(`limit=${limit}`);
    const following = await get(server, next as string);
    expect(following.body.map((pet: { name: string }) => pet.name)).toEqual(['Tail']);
    // The new tag is current again: the page with its Link answers 304.
    expectNotModified(await get(server, url, { ...AUTH, 'If-None-Match': String(polled.headers.etag) }));
  });

  it('when If-None-Match is *, weak, a list or wrong, then 304 for a match and 200 with the body otherwise', async () => {
    const url = '/v1/pets?limit=3';
    const etag = String((await get(server, url)).headers.etag);
    for (const header of ['*', `W/${etag}`, `"stale", ${etag}`]) {
      expectNotModified(await get(server, url, { ...AUTH, 'If-None-Match': header }));
    }
    for (const header of ['"stale"', etag.slice(1, -1), `W/"${'x'.repeat(8000)}", ${etag}`.replace(/"$/, '')]) {
      const full = await get(server, url, { ...AUTH, 'If-None-Match': header });
      expect(full.status, header.slice(0, 40)).toBe(200);
      expect(full.headers.etag).toBe(etag);
    }
  });

  it('when the same page is asked by another key, then the tag is the same body’s and Vary names Authorization', async () => {
    const mine = await get(server, '/v1/pets?limit=2');
    const theirs = await get(server, '/v1/pets?limit=2', bearer(OTHER_API_KEY));
    expect(theirs.headers.etag).toBe(mine.headers.etag);
    expect(theirs.headers.vary).toBe('Authorization');
  });

  it('when the deprecated get by id is polled, then its 304 carries Deprecation, Sunset and Link as its 200 does', async () => {
    const created = await server.request.post('/v1/pets').set(AUTH).send({ name: 'Kept', categoryId: 2 });
    const url = `/v1/pets/${created.body.id}`;
    const first = await get(server, url);
    expect(first.status).toBe(200);
    expectRevalidated(first, 'Authorization');
    const again = await get(server, url, { ...AUTH, 'If-None-Match': String(first.headers.etag) });
    expectNotModified(again);
    for (const name of ['deprecation', 'sunset', 'link']) expect(again.headers[name], name).toBe(first.headers[name]);
  });

  it('when an answer is an error, then no ETag, no 304 even for *, and no-store', async () => {
    for (const url of ['/v1/pets/987654321', '/v1/pets?limit=0', '/v1/nope']) {
      const refused = await get(server, url, { ...AUTH, 'If-None-Match': '*' });
      expect(refused.status, url).toBeGreaterThanOrEqual(400);
      expect(refused.headers.etag, url).toBeUndefined();
      expect(refused.headers['cache-control'], url).toBe('no-store');
    }
    const unauthenticated = await get(server, '/v1/pets', { 'If-None-Match': '*' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.etag).toBeUndefined();
  });

  it('when a create sends If-None-Match: *, then it is created as ever (201, no-store, no ETag)', async () => {
    const created = await server.request
      .post('/v1/pets')
      .set({ ...AUTH, 'If-None-Match': '*' })
      .send({ name: 'Star', categoryId: 1 });
    expect(created.status).toBe(201);
    expect(created.headers.etag).toBeUndefined();
    expect(created.headers['cache-control']).toBe('no-store');
  });
});

/** 3 a second, bursts of 4: the fifth paid request within a second is refused. */
const SMALL = { rate: 3, burst: 4 };

/** A 200, then six re-polls with If-None-Match: seven answers where the burst pays for four. */
async function pollSix(server: TestServer, key: string, url: string, ifNoneMatch: (etag: string) => string) {
  const first = await get(server, url, bearer(key));
  expect(first.status).toBe(200);
  const conditional = { ...bearer(key), 'If-None-Match': ifNoneMatch(String(first.headers.etag)) };
  const statuses: number[] = [];
  for (let sent = 0; sent < 6; sent += 1) statuses.push((await get(server, url, conditional)).status);
  return statuses;
}

/** A key polling with * within its burst gets 304s, then 429: none of those points came back. */
function expectStarredPaid(statuses: number[]) {
  expect(statuses.slice(0, 3)).toEqual([304, 304, 304]);
  expect(statuses.filter((status) => status !== 304 && status !== 429)).toEqual([]);
  expect(statuses).toContain(429);
}

describe('a 304 gives its rate-limit point back (3/s, bursts of 4)', () => {
  const server = useTestServer({ rateLimits: { perKey: SMALL, authFailures: { rate: 0, burst: 0 } } });

  it('when a key re-polls with the ETag past its burst, then it gets 200 and 304s, never 429', async () => {
    const url = '/v1/pets?limit=5';
    const first = await get(server, url);
    expect(first.status).toBe(200);
    const conditional = { ...AUTH, 'If-None-Match': String(first.headers.etag) };
    const statuses: number[] = [];
    // Six 304s after the 200: seven answers where the burst pays for four.
    for (let sent = 0; sent < 6; sent += 1) {
      const again = await get(server, url, conditional);
      statuses.push(again.status);
      // The point came back: no less is left than after the 200 (more once a new second began).
      if (sent === 0)
        expect(remaining(again.headers.ratelimit)).toBeGreaterThanOrEqual(remaining(first.headers.ratelimit));
    }
    expect(statuses).toEqual([304, 304, 304, 304, 304, 304]);
  });

  it('when a key floods 304s, then past its revalidation allowance they cost their point and 429 comes', async () => {
    const headers = bearer(OTHER_API_KEY);
    const url = '/v1/pets?limit=4';
    const etag = String((await get(server, url, headers)).headers.etag);
    const statuses: number[] = [];
    for (let sent = 0; sent < 24; sent += 1) {
      statuses.push((await get(server, url, { ...headers, 'If-None-Match': etag })).status);
    }
    expect(statuses.filter((status) => status !== 304 && status !== 429)).toEqual([]);
    expect(statuses).toContain(429);
  });
});

describe('a 304 matched by * gives nothing back (3/s, bursts of 4)', () => {
  const server = useTestServer({ rateLimits: { perKey: SMALL, authFailures: { rate: 0, burst: 0 } } });

  it('when a key re-polls with * past its burst, then its 304s cost their points and 429 comes; with the tag, never', async () => {
    const url = '/v1/pets?limit=3';
    expectStarredPaid(await pollSix(server, API_KEY, url, () => '*'));
    expect(await pollSix(server, OTHER_API_KEY, url, (etag) => etag)).toEqual(Array(6).fill(304));
  });
});

describe('a GraphQL 304 gives its point back too (3/s, bursts of 4)', () => {
  const server = useTestServer({ rateLimits: { perKey: SMALL, authFailures: { rate: 0, burst: 0 } } });

  it('when a GraphQL GET is re-polled with its ETag, on Yoga’s path and the fast path, then never 429', async () => {
    const headers = bearer(API_KEY);
    const url = `/graphql?query=${encodeURIComponent('{ pets(limit: 2) { id } } # polled')}`;
    const first = await get(server, url, headers);
    expect(first.status).toBe(200);
    const conditional = { ...headers, 'If-None-Match': String(first.headers.etag) };
    const statuses: number[] = [];
    for (let sent = 0; sent < 6; sent += 1) statuses.push((await get(server, url, conditional)).status);
    expect(statuses).toEqual([304, 304, 304, 304, 304, 304]);
  });

  it('when a GraphQL GET is polled with *, then its 304s cost their points and 429 comes', async () => {
    const url = `/graphql?query=${encodeURIComponent('{ pets(limit: 2) { id } } # starred')}`;
    expectStarredPaid(await pollSix(server, OTHER_API_KEY, url, () => '*'));
  });
});

describe('conditional GraphQL GETs', () => {
  const server = useTestServer();
  let sent = 0;
  /** A document this server has not seen: Yoga answers its first request, the fast path the next. */
  const unseen = (query: string) => `/graphql?query=${encodeURIComponent(`${query} # case ${++sent}`)}`;

  it('when a query is sent by GET, then its 200 carries an ETag, and If-None-Match gets 304 from Yoga and the fast path alike', async () => {
    const url = unseen('{ pets(limit: 2) { id name } }');
    const byYoga = await get(server, url, { ...AUTH, 'If-None-Match': '*' });
    expectNotModified(byYoga);
    expectRevalidated(byYoga, 'Authorization, Accept');
    const full = await get(server, url);
    expect(full.status).toBe(200);
    expectRevalidated(full, 'Authorization, Accept');
    expect(full.headers.etag).toBe(byYoga.headers.etag);
    const byFastPath = await get(server, url, { ...AUTH, 'If-None-Match': `W/${full.headers.etag}` });
    expectNotModified(byFastPath);
    expect(byFastPath.headers.etag).toBe(full.headers.etag);
  });

  it('when the same query is asked in the other media type, then another tag', async () => {
    const url = unseen('{ pets(limit: 1) { id } }');
    const json = await get(server, url);
    const graphqlResponse = await get(server, url, { ...AUTH, Accept: 'application/graphql-response+json' });
    expect(graphqlResponse.status).toBe(200);
    expect(graphqlResponse.headers.etag).toMatch(TAG);
    expect(graphqlResponse.headers.etag).not.toBe(json.headers.etag);
  });

  it('when a GET answer has errors, or the query comes by POST, then no ETag, no 304, and no-store', async () => {
    const failing = unseen('{ pet(id: "-1") { id } }');
    for (let time = 0; time < 2; time += 1) {
      const answer = await get(server, failing, { ...AUTH, 'If-None-Match': '*' });
      expect(answer.status).toBe(200);
      expect(answer.body.errors).toBeDefined();
      expect(answer.headers.etag).toBeUndefined();
      expect(answer.headers['cache-control']).toBe('no-store');
    }
    for (let time = 0; time < 2; time += 1) {
      const posted = await server.request
        .post('/graphql')
        .set({ ...AUTH, 'If-None-Match': '*' })
        .send({ query: '{ pets(limit: 1) { id } } # posted' });
      expect(posted.status).toBe(200);
      expect(posted.headers.etag).toBeUndefined();
      expect(posted.headers['cache-control']).toBe('no-store');
    }
  });
});
