// A resume pays for what it replays (issue 36, M2): a petCreated stream pays a point for each
// PETS_PER_POINT pets it delivers, as paging them over GET /v1/pets would, and waits while its key has
// none (the stream pauses; it is not cut).
import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../src/pets/cursor.ts';
import { PETS_PER_POINT } from '../src/subscriptions/follow-pets.ts';
import { bearer, PET_CREATED } from './support/pet-created.ts';
import { type GraphQLResult, subscribeSse } from './support/sse.ts';
import { API_KEY, AUTH, type TestServer, useTestServer } from './support/test-server.ts';
import { wsClient, wsSubscribe } from './support/websocket.ts';

const STORED = 300;
/** From the first pet's cursor: every pet after it. */
const REPLAYED = STORED - 1;
const replayedIds = (from: number, count: number) => Array.from({ length: count }, (_, index) => from + index);
const OFF = { rate: 0, burst: 0 };

/** `STORED` pets written straight to the database (a key at one request a second could not create them). */
async function storePets(server: TestServer): Promise<void> {
  const pets = Array.from({ length: STORED }, (_, index) => ({
    _id: index + 1,
    name: `Replayed ${index + 1}`,
    categoryId: 1,
  }));
  await server.database.db.collection<{ _id: number }>('pets').insertMany(pets);
}

/** A stream as the tests read it, over either transport: its next result, and the client leaving. */
interface Replay {
  nextResult(withinMs: number): Promise<GraphQLResult>;
  close(): void;
}

/** Every pet id the stream delivers until it has `count`, within `withinMs`. */
async function idsOf(stream: Replay, count: number, withinMs: number): Promise<number[]> {
  const ids: number[] = [];
  const deadline = performance.now() + withinMs;
  while (ids.length < count) {
    const result = await stream.nextResult(Math.max(1, deadline - performance.now()));
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    ids.push(Number((result.data as { petCreated: { pet: { id: string } } }).petCreated.pet.id));
  }
  return ids;
}

const FROM_FIRST = { query: PET_CREATED, variables: { after: encodeCursor(1) } };

async function resume(server: TestServer): Promise<Replay> {
  const stream = await subscribeSse(server.baseUrl, { ...FROM_FIRST, headers: AUTH });
  expect(stream.status).toBe(200);
  return stream;
}

/** The same resume over GraphQL over WebSocket, one socket of its own. */
async function resumeOverWebSocket(server: TestServer): Promise<Replay> {
  const client = wsClient(server.baseUrl, bearer(API_KEY));
  const operation = wsSubscribe(client, FROM_FIRST);
  return {
    nextResult: (withinMs) => operation.next(withinMs),
    close: () => void client.dispose(),
  };
}

describe.each([
  ['SSE', resume],
  ['WebSocket', resumeOverWebSocket],
])(
  `at RATE_LIMIT_PER_KEY=1 and RATE_LIMIT_BURST=30, five replays over %s of ${STORED} stored pets from the first cursor`,
  (_, open) => {
    const server = useTestServer({ rateLimits: { perKey: { rate: 1, burst: 30 }, authFailures: OFF } });

    it('leave at most 15 of 30 following GETs passing: the replays paid for their pages', async () => {
      await storePets(server);
      const streams = await Promise.all(Array.from({ length: 5 }, () => open(server)));
      try {
        for (const stream of streams) {
          expect(await idsOf(stream, REPLAYED, 10_000)).toEqual(replayedIds(2, REPLAYED));
        }
      } finally {
        for (const stream of streams) stream.close();
      }
      let passed = 0;
      for (let index = 0; index < 30; index++) {
        const response = await server.request.get(`${server.restBasePath}/pets?limit=100`).set(AUTH);
        expect([200, 429]).toContain(response.status);
        if (response.status === 200) passed++;
      }
      console.info(`${passed} of 30 GETs passed after the replays`);
      // 5 subscriptions and 5 × 3 pages took 20 of 30 points; the second's refills add a few.
      expect(passed).toBeLessThanOrEqual(15);
    });
  },
);

describe('a replay its key cannot pay for at once', () => {
  const server = useTestServer({ rateLimits: { perKey: { rate: 2, burst: 2 }, authFailures: OFF } });

  it('waits for its points and then goes on: every pet once, in order, the stream never cut', async () => {
    await storePets(server);
    const stream = await resume(server);
    try {
      // The subscription's point and the first page's leave nothing: the rest waits for the quota.
      const first = await idsOf(stream, PETS_PER_POINT + 1, 5_000);
      expect(first).toEqual(replayedIds(2, PETS_PER_POINT + 1));
      const rest = await idsOf(stream, REPLAYED - first.length, 10_000);
      expect(rest).toEqual(replayedIds(2 + first.length, REPLAYED - first.length));
    } finally {
      stream.close();
    }
  });
});
