import { ApolloClient, ApolloLink, gql, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { encodeCursor } from '../src/pets/cursor.ts';
import { capturingLogger } from './support/capturing-logger.ts';
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
import { type GraphQLResult, subscribeSse } from './support/sse.ts';
import { API_KEY, AUTH, type TestServer, useTestServer } from './support/test-server.ts';
import { rawSocket, upgradeStatus, type WsOperation, wsClient, wsSubscribe } from './support/websocket.ts';

/** The operation's next result is this pet, within DELIVERY_MS. */
async function expectPet(operation: WsOperation, id: number): Promise<Delivered> {
  return expectDelivered(await operation.next(DELIVERY_MS), id);
}

/** A subscription that the server has admitted: its slot is taken once the open count says so. */
async function subscribed(server: TestServer, client: Client, variables: Record<string, unknown> = {}) {
  const before = await openStreams(server);
  const operation = wsSubscribe(client, { query: PET_CREATED, variables });
  await vi.waitFor(async () => expect(await openStreams(server)).toBeGreaterThan(before), WAIT);
  return operation;
}

const codeOf = (errors: unknown) => (errors as GraphQLResult['errors'])?.[0]?.extensions?.code;

describe('petCreated over WebSocket (graphql-transport-ws)', () => {
  const { logger, lines } = capturingLogger();
  const server = useTestServer({ logger, corsOrigins: 'https://app.example.com' });
  let client: Client;
  beforeAll(() => {
    client = wsClient(server.baseUrl, bearer(API_KEY));
  });
  // Hooks after tests run in reverse: the client leaves before the server closes.
  afterAll(() => client?.dispose());
  // Each test counts open streams: the last test's are released first (a client's `complete` travels).
  beforeEach(async () => {
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
  });

  it('with graphql-ws, three pets created over REST arrive in order, each within 1 s', async () => {
    const operation = await subscribed(server, client);
    try {
      for (const name of ['Ada', 'Bea', 'Cy']) {
        expect((await expectPet(operation, await createPet(server, name))).pet.name).toBe(name);
      }
    } finally {
      operation.close();
    }
  });

  it('with `after`, the pets after that cursor first, then live ones; with `status`, only that status', async () => {
    const first = await createPet(server, 'Old-1');
    const second = await createPet(server, 'Old-2');
    const resumed = wsSubscribe(client, { query: PET_CREATED, variables: { after: encodeCursor(first) } });
    const sold = await subscribed(server, client, { status: 'SOLD' });
    try {
      await expectPet(resumed, second);
      await createPet(server, 'Free', 'available');
      const gone = await createPet(server, 'Gone', 'sold');
      expect((await expectPet(sold, gone)).pet.status).toBe('SOLD');
      await vi.waitFor(() => expect(resumed.next(DELIVERY_MS)).resolves.toBeDefined());
    } finally {
      resumed.close();
      sold.close();
    }
  });

  it("with Apollo Client 4's GraphQLWsLink, the same three pets in order", async () => {
    const apolloWs = wsClient(server.baseUrl, bearer(API_KEY));
    const apollo = new ApolloClient({
      link: ApolloLink.from([new GraphQLWsLink(apolloWs)]),
      cache: new InMemoryCache(),
    });
    const got: Delivered[] = [];
    const before = await openStreams(server);
    const subscription = apollo
      .subscribe<{ petCreated: Delivered }>({ query: gql(PET_CREATED) })
      .subscribe({ next: (result) => result.data && got.push(result.data.petCreated) });
    try {
      await vi.waitFor(async () => expect(await openStreams(server)).toBeGreaterThan(before), WAIT);
      const ids: number[] = [];
      for (const name of ['Apollo-1', 'Apollo-2', 'Apollo-3']) {
        ids.push(await createPet(server, name));
        await vi.waitFor(() => expect(got).toHaveLength(ids.length), { timeout: DELIVERY_MS, interval: 10 });
      }
      expect(got.map((delivered) => delivered.pet.id)).toEqual(ids.map(String));
    } finally {
      subscription.unsubscribe();
      await apolloWs.dispose();
    }
  });

  it('a query and a mutation run over the socket too, through the same rules; the created pet reaches a subscriber', async () => {
    const operation = await subscribed(server, client);
    try {
      const created = wsSubscribe(client, {
        query: 'mutation { createPet(input: { name: "Over-WS", categoryId: 1 }) { id } }',
      });
      const { data } = await created.next();
      expect(await created.ended()).toBeUndefined();
      const id = Number((data as { createPet: { id: string } }).createPet.id);
      await expectPet(operation, id);
      const query = wsSubscribe(client, { query: `query { pet(id: ${id}) { name } }` });
      expect((await query.next()).data).toEqual({ pet: { name: 'Over-WS' } });
    } finally {
      operation.close();
    }
  });

  it('when the client completes, its access-log line says how many events and why the stream ended; the slot is released', async () => {
    const from = lines.length;
    const operation = await subscribed(server, client);
    await expectPet(operation, await createPet(server, 'Logged-1'));
    operation.close();
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
    const line = () => lines.slice(from).find((entry) => entry.events === 1);
    await vi.waitFor(() => expect(line()).toMatchObject({ method: 'GET', url: '/graphql', streamEnd: 'client' }));
    expect(line()?.status).toBe(200);
  });

  it('without a key, or with a wrong one, the connection is refused with 4401 (final for graphql-ws clients)', async () => {
    for (const params of [undefined, bearer('wrong-key-aaaaaaaaaaaaaaaaaa'), { Authorization: 42 }]) {
      const closes: number[] = [];
      const refused = wsClient(server.baseUrl, params as Record<string, unknown> | undefined, closes);
      const errors = await wsSubscribe(refused, { query: PET_CREATED }).ended();
      expect(errors).toBeDefined();
      expect(closes).toEqual([4401]);
      await refused.dispose();
    }
  });

  it('a key without pets:read gets an `error` FORBIDDEN for its subscribe, and holds no slot', async () => {
    const writer = wsClient(server.baseUrl, bearer(await issueKey(server, ['pets:write'])));
    const errors = await wsSubscribe(writer, { query: PET_CREATED }).ended();
    expect(codeOf(errors)).toBe('FORBIDDEN');
    await writer.dispose();
    expect(await openStreams(server)).toBe(0);
    expect(lines.some((line) => line.status === 403 && line.url === '/graphql')).toBe(true);
  });

  it('the 11th stream of a key, SSE and WebSocket together, is refused with TOO_MANY_SUBSCRIPTIONS', async () => {
    const sse = await Promise.all(
      Array.from({ length: 5 }, () => subscribeSse(server.baseUrl, { query: PET_CREATED, headers: AUTH })),
    );
    const ws: WsOperation[] = [];
    try {
      for (let index = 0; index < 5; index++) ws.push(await subscribed(server, client));
      const errors = await wsSubscribe(client, { query: PET_CREATED }).ended();
      expect(codeOf(errors)).toBe('TOO_MANY_SUBSCRIPTIONS');
      const overSse = await subscribeSse(server.baseUrl, { query: PET_CREATED, headers: AUTH });
      expect(overSse.status).toBe(429);
      overSse.close();
    } finally {
      for (const stream of sse) stream.close();
      for (const operation of ws) operation.close();
    }
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
  });

  it('the upgrade: from our own origin, a CORS_ORIGINS origin or no browser at all it opens; from another origin 403; elsewhere 404', async () => {
    const host = new URL(server.baseUrl).host;
    expect(await upgradeStatus(server.baseUrl)).toBe(101);
    expect(await upgradeStatus(server.baseUrl, { Origin: `http://${host}` })).toBe(101);
    expect(await upgradeStatus(server.baseUrl, { Origin: 'https://app.example.com' })).toBe(101);
    expect(await upgradeStatus(server.baseUrl, { Origin: 'https://evil.example' })).toBe(403);
    expect(await upgradeStatus(server.baseUrl.replace(/$/, '/v1'), {})).toBe(404);
  });
});

describe('over WebSocket under trusted documents', () => {
  const server = useTestServer({ trustedDocuments: 'enforce' });
  beforeAll(() => publishPetCreated(server));

  it('a key limited to published documents: a whole subscription is refused; by documentId (with query "") it streams', async () => {
    const limited = wsClient(server.baseUrl, bearer(await issueKey(server, undefined, false)));
    try {
      const whole = await wsSubscribe(limited, { query: PET_CREATED }).ended();
      expect(codeOf(whole)).toBe('PERSISTED_QUERY_ID_REQUIRED');
      // graphql-ws requires a `query` string: an id alone comes with an empty one.
      let operation: WsOperation | undefined;
      await vi.waitFor(
        async () => {
          operation?.close();
          operation = wsSubscribe(limited, { query: '', documentId: PET_CREATED_ID });
          await vi.waitFor(async () => expect(await openStreams(server)).toBe(1), { timeout: 500, interval: 50 });
        },
        { timeout: 10_000, interval: 200 },
      );
      await expectPet(operation as WsOperation, await createPet(server, 'Published'));
      operation?.close();
    } finally {
      await limited.dispose();
    }
  });
});

describe('hostile WebSocket clients', () => {
  const PING_MS = 200;
  const server = useTestServer({ maxGraphQLBodyBytes: 4_096, env: { WEBSOCKET_PING_MS: String(PING_MS) } });

  const init = { type: 'connection_init', payload: bearer(API_KEY) };
  const subscribe = (id: string) => ({ id, type: 'subscribe', payload: { query: PET_CREATED } });

  it('a message that is not JSON, or of an unknown type, closes with 4400', async () => {
    for (const message of ['not json {', { type: 'hello' }]) {
      const raw = await rawSocket(server.baseUrl);
      raw.send(init);
      raw.send(message);
      expect((await raw.closed).code).toBe(4400);
    }
  });

  it('a subscribe before connection_init closes with 4401; a second connection_init with 4429', async () => {
    const early = await rawSocket(server.baseUrl);
    early.send(subscribe('1'));
    expect((await early.closed).code).toBe(4401);
    const twice = await rawSocket(server.baseUrl);
    twice.send(init);
    twice.send(init);
    expect((await twice.closed).code).toBe(4429);
  });

  it('a message over MAX_GRAPHQL_BODY_BYTES closes with 1009 before it is read whole', async () => {
    const raw = await rawSocket(server.baseUrl);
    raw.send(init);
    raw.send({ id: '1', type: 'subscribe', payload: { query: `{ ${'a'.repeat(5_000)} }` } });
    expect((await raw.closed).code).toBe(1009);
  });

  it('two subscribes with one id: the second closes the socket with 4409, and the first stream is released', async () => {
    const raw = await rawSocket(server.baseUrl);
    await raw.init(bearer(API_KEY));
    raw.send(subscribe('same'));
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(1), WAIT);
    raw.send(subscribe('same'));
    expect((await raw.closed).code).toBe(4409);
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
  });

  it('no connection_init within 3 s closes with 4408', { timeout: 10_000 }, async () => {
    const raw = await rawSocket(server.baseUrl);
    const startedAt = performance.now();
    expect((await raw.closed).code).toBe(4408);
    expect(performance.now() - startedAt).toBeLessThan(4_000);
  });

  it('a client that stops answering pings (it never reads) is cut within two ping intervals, and its stream released', async () => {
    const raw = await rawSocket(server.baseUrl, { autoPong: false });
    await raw.init(bearer(API_KEY));
    raw.send(subscribe('1'));
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(1), WAIT);
    const startedAt = performance.now();
    expect((await raw.closed).code).toBe(1006);
    expect(performance.now() - startedAt).toBeLessThan(3 * PING_MS + 200);
    await vi.waitFor(async () => expect(await openStreams(server)).toBe(0), WAIT);
  });

  it('a socket without the graphql-transport-ws subprotocol is closed with 4406', async () => {
    const raw = await rawSocket(server.baseUrl, { protocol: '' });
    expect((await raw.closed).code).toBe(4406);
  });
});

describe('over WebSocket, the rate limits', () => {
  const server = useTestServer({
    rateLimits: { perKey: { rate: 1, burst: 3 }, authFailures: { rate: 1, burst: 2 } },
  });

  it('connection_init takes a point and each subscribe another: beyond the burst, an `error` RATE_LIMITED', async () => {
    const client = wsClient(server.baseUrl, bearer(API_KEY));
    try {
      const codes: unknown[] = [];
      for (let index = 0; index < 3; index++) {
        const operation = wsSubscribe(client, { query: '{ __typename }' });
        const ended = await operation.ended();
        codes.push(ended === undefined ? 'ok' : codeOf(ended));
      }
      expect(codes).toEqual(['ok', 'ok', 'RATE_LIMITED']);
    } finally {
      await client.dispose();
    }
  });

  it('wrong keys count as failed authentications of the address: beyond the limit, 4429', async () => {
    const closes: number[] = [];
    for (let index = 0; index < 3; index++) {
      const wrong = wsClient(server.baseUrl, bearer('wrong-key-aaaaaaaaaaaaaaaaaa'), closes);
      await wsSubscribe(wrong, { query: '{ __typename }' }).ended();
      await wrong.dispose();
    }
    expect(closes).toEqual([4401, 4401, 4429]);
  });
});
