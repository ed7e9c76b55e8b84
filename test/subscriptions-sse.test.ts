import { beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeCursor } from '../src/pets/cursor.ts';
import { capturingLogger, type LogLine } from './support/capturing-logger.ts';
import { sampleIn } from './support/metric-sample.ts';
import {
  bearer,
  createPet,
  DELIVERY_MS,
  type Delivered,
  expectDelivered,
  issueKey,
  openStreams,
  PET_CREATED,
  PET_CREATED_ID,
  publishPetCreated,
  WAIT,
} from './support/pet-created.ts';
import { type GraphQLResult, type SseStream, type SubscribeOptions, subscribeSse } from './support/sse.ts';
import { API_KEY, AUTH, OTHER_API_KEY, type TestServer, useTestServer } from './support/test-server.ts';

const codeOf = (result: GraphQLResult) => result.errors?.[0]?.extensions?.code;

function open(server: TestServer, options: Partial<SubscribeOptions> = {}): Promise<SseStream> {
  return subscribeSse(server.baseUrl, { query: PET_CREATED, headers: AUTH, ...options });
}

/** The next event is this pet, within DELIVERY_MS. */
async function expectPet(stream: SseStream, id: number): Promise<Delivered> {
  return expectDelivered(await stream.nextResult(DELIVERY_MS), id);
}

describe('petCreated over SSE', () => {
  const { logger, lines } = capturingLogger();
  const server = useTestServer({ logger });

  it('when three pets are created over REST, then a subscriber gets each, in order, within 1 s', async () => {
    const stream = await open(server);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      for (const name of ['Ada', 'Bea', 'Cy']) {
        const id = await createPet(server, name);
        expect((await expectPet(stream, id)).pet.name).toBe(name);
      }
    } finally {
      stream.close();
    }
  });

  it('with `after`, first the pets after that cursor, in order, then live ones', async () => {
    const first = await createPet(server, 'Old-1');
    const second = await createPet(server, 'Old-2');
    const third = await createPet(server, 'Old-3');
    const stream = await open(server, { variables: { after: encodeCursor(first) } });
    try {
      await expectPet(stream, second);
      await expectPet(stream, third);
      const live = await createPet(server, 'Live');
      await expectPet(stream, live);
    } finally {
      stream.close();
    }
  });

  it('with `status`, only pets of that status', async () => {
    const stream = await open(server, { variables: { status: 'SOLD' } });
    try {
      await createPet(server, 'Free', 'available');
      const sold = await createPet(server, 'Gone', 'sold');
      expect((await expectPet(stream, sold)).pet.status).toBe('SOLD');
    } finally {
      stream.close();
    }
  });

  it('by GET, as EventSource sends it (with a key), the same events', async () => {
    const stream = await open(server, { method: 'GET' });
    try {
      expect(stream.status).toBe(200);
      await expectPet(stream, await createPet(server, 'ByGet'));
    } finally {
      stream.close();
    }
  });

  it('when the client leaves, then its access-log line says how many events and why it ended, and the metrics count them', async () => {
    // The earlier tests' streams are released first, so that the counts below are this stream's.
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
    const before = await server.metrics.scrape.text();
    const stream = await open(server);
    await expectPet(stream, await createPet(server, 'Logged-1'));
    await expectPet(stream, await createPet(server, 'Logged-2'));
    stream.close();
    const line = () => lineOf(lines, stream);
    await vi.waitFor(
      () => expect(line()).toMatchObject({ method: 'POST', url: '/graphql', events: 2, streamEnd: 'client' }),
      WAIT,
    );
    // The client cut the stream: no status, as for any request whose client left.
    expect(line()?.status).toBeUndefined();
    expect(line()?.ms).toBeGreaterThan(0);
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
    const after = await server.metrics.scrape.text();
    const grew = (name: string, labels?: Record<string, string>) =>
      sampleIn(after, name, labels) - sampleIn(before, name, labels);
    expect(grew('graphql_subscription_events_total')).toBe(2);
    expect(grew('graphql_subscriptions_ended_total', { reason: 'client' })).toBe(1);
    // A stream's length is its client's choice, not latency: it stays out of the request histogram.
    expect(grew('http_request_duration_seconds_count', { route: '/graphql', method: 'POST' })).toBe(0);
  });

  it('hostile arguments are refused before a stream is taken: a malformed, a huge and a foreign `after`, an unknown status', async () => {
    const forged = Buffer.from('pet:0', 'utf8').toString('base64url');
    for (const after of ['not a cursor!', 'A'.repeat(5_000), forged, encodeCursor(1).slice(0, -1)]) {
      const stream = await open(server, { variables: { after } });
      const events = await stream.rest();
      expect(events.map((event) => event.event)).toEqual(['next', 'complete']);
      const result = JSON.parse(events[0]?.data ?? '{}') as GraphQLResult;
      expect(codeOf(result)).toBe('BAD_USER_INPUT');
      expect(result.errors?.[0]?.extensions?.field).toBe('after');
    }
    const badStatus = await open(server, { variables: { status: 'LOST' } });
    const [refused] = await badStatus.rest();
    expect(JSON.parse(refused?.data ?? '{}').errors?.[0]?.message).toMatch(/PetStatus/);
    expect(await openStreams(server)).toBe(0);
  });

  it('when the client accepts only JSON, then Yoga answers 406 and the stream it subscribed holds no slot', async () => {
    const before = sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_ended_total', {
      reason: 'client',
    });
    const response = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ query: PET_CREATED }),
    });
    expect(response.status).toBe(406);
    await response.arrayBuffer();
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
    const after = sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_ended_total', {
      reason: 'client',
    });
    expect(after - before).toBe(1);
  });

  it('without a key: 401, and no stream', async () => {
    const stream = await subscribeSse(server.baseUrl, { query: PET_CREATED });
    expect(stream.status).toBe(401);
    stream.close();
  });

  it('a key without pets:read is refused with 403 FORBIDDEN, whichever way it asks', async () => {
    const auth = bearer(await issueKey(server, ['pets:write']));
    for (const method of ['POST', 'GET'] as const) {
      const stream = await open(server, { headers: auth, method });
      expect(stream.status).toBe(403);
      expect(codeOf(await stream.nextResult())).toBe('FORBIDDEN');
      stream.close();
    }
    expect(await openStreams(server)).toBe(0);
  });

  it('the 11th stream of a key is refused with 429 TOO_MANY_SUBSCRIPTIONS and Retry-After; after one closes, a new one is admitted', async () => {
    const streams = await Promise.all(Array.from({ length: 10 }, () => open(server)));
    try {
      expect(streams.map((stream) => stream.status)).toEqual(Array(10).fill(200));
      const refused = await open(server);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('10');
      const result = await refused.nextResult();
      expect(codeOf(result)).toBe('TOO_MANY_SUBSCRIPTIONS');
      expect(result.errors?.[0]?.extensions?.limit).toBe('per_key');
      expect(result.errors?.[0]?.message).toMatch(/10 subscriptions/);
      // Another key is not held back by this one's streams.
      const other = await open(server, { headers: bearer(OTHER_API_KEY) });
      expect(other.status).toBe(200);
      other.close();
      streams.pop()?.close();
      await vi.waitFor(async () => expect(await openStreams(server)).toBe(9), WAIT);
      const admitted = await open(server);
      expect(admitted.status).toBe(200);
      streams.push(admitted);
      expect(
        sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_refused_total', { reason: 'per_key' }),
      ).toBe(1);
    } finally {
      for (const stream of streams) stream.close();
    }
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
  });
});

/** The access-log line of a stream's request. */
function lineOf(lines: LogLine[], stream: SseStream): LogLine | undefined {
  const reqId = stream.headers.get('x-request-id');
  return lines.find((line) => line.reqId === reqId && line.msg !== undefined && 'ms' in line);
}

describe('the instance limit (MAX_SUBSCRIPTIONS) and the end of streams', () => {
  const { logger, lines } = capturingLogger();
  const server = useTestServer({ logger, env: { MAX_SUBSCRIPTIONS: '2' } });

  it('beyond the instance limit, any key is refused with 429 TOO_MANY_SUBSCRIPTIONS (instance)', async () => {
    const first = await open(server);
    const second = await open(server, { headers: bearer(OTHER_API_KEY) });
    try {
      expect([first.status, second.status]).toEqual([200, 200]);
      const refused = await open(server, { headers: bearer(API_KEY) });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('10');
      expect((await refused.nextResult()).errors?.[0]?.extensions?.limit).toBe('instance');
      second.close();
      await vi.waitFor(async () => expect(await openStreams(server)).toBe(1), WAIT);
      const admitted = await open(server, { headers: bearer(OTHER_API_KEY) });
      expect(admitted.status).toBe(200);
      admitted.close();
    } finally {
      first.close();
      second.close();
    }
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
  });

  it('endStreams ends every stream with `complete`, logged as shutdown, and refuses new ones with 503', async () => {
    const stream = await open(server);
    await expectPet(stream, await createPet(server, 'Before-stop'));
    server.service.endStreams();
    expect((await stream.next(DELIVERY_MS)).event).toBe('complete');
    await vi.waitFor(
      () => expect(lineOf(lines, stream)).toMatchObject({ events: 1, streamEnd: 'shutdown', status: 200 }),
      WAIT,
    );
    const late = await open(server);
    expect(late.status).toBe(503);
    expect(codeOf(await late.nextResult())).toBe('SERVICE_UNAVAILABLE');
    const text = await server.metrics.scrape.text();
    expect(sampleIn(text, 'graphql_subscriptions_ended_total', { reason: 'shutdown' })).toBe(1);
    expect(sampleIn(text, 'graphql_subscriptions_open')).toBe(0);
  });
});

describe('subscriptions under trusted documents and the document limits', () => {
  const server = useTestServer({ trustedDocuments: 'enforce' });
  beforeAll(() => publishPetCreated(server));

  it('a key limited to published documents: a subscription sent whole is refused; by its documentId it streams', async () => {
    const limited = bearer(await issueKey(server, undefined, false));
    const whole = await open(server, { headers: limited });
    // A request error: over SSE, as with application/json, 200 and the error in the one event.
    expect(whole.status).toBe(200);
    expect(codeOf(await whole.nextResult())).toBe('PERSISTED_QUERY_ID_REQUIRED');
    whole.close();
    // The published ids are read every 2 s, like the keys.
    let stream: SseStream | undefined;
    await vi.waitFor(
      async () => {
        stream = await subscribeSse(server.baseUrl, { documentId: PET_CREATED_ID, headers: limited });
        if (stream.status !== 200) stream.close();
        expect(stream.status).toBe(200);
      },
      { timeout: 10_000, interval: 200 },
    );
    try {
      await expectPet(stream as SseStream, await createPet(server, 'Published'));
    } finally {
      stream?.close();
    }
  });

  it('a subscription over the document limits is refused before it subscribes', async () => {
    const aliases = Array.from({ length: 16 }, (_, index) => `c${index}: cursor`).join(' ');
    const stream = await open(server, { query: `subscription { petCreated { ${aliases} } }` });
    expect(stream.status).toBe(200);
    expect(codeOf(await stream.nextResult())).toBe('TOO_MANY_ALIASES');
    stream.close();
    expect(await openStreams(server)).toBe(0);
  });
});
