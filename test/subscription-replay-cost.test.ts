// A resume pays for what it replays (issue 36, M2): a petCreated stream pays a point for each
// PETS_PER_POINT pets it delivers, as paging them over GET /v1/pets would, and waits while its key has
// none (the stream pauses; it is not cut).
import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../src/pets/cursor.ts';
import { PETS_PER_POINT } from '../src/subscriptions/follow-pets.ts';
import { PET_CREATED } from './support/pet-created.ts';
import { type SseStream, subscribeSse } from './support/sse.ts';
import { AUTH, type TestServer, useTestServer } from './support/test-server.ts';

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
  await server.database.db.collection('pets').insertMany(pets);
}

/** Every pet id the stream delivers until it has `count`, within `withinMs`. */
async function idsOf(stream: SseStream, count: number, withinMs: number): Promise<number[]> {
  const ids: number[] = [];
  const deadline = performance.now() + withinMs;
  while (ids.length < count) {
    const result = await stream.nextResult(Math.max(1, deadline - performance.now()));
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    ids.push(Number((result.data as { petCreated: { pet: { id: string } } }).petCreated.pet.id));
  }
  return ids;
}

const resume = (server: TestServer) =>
  subscribeSse(server.baseUrl, { query: PET_CREATED, headers: AUTH, variables: { after: encodeCursor(1) } });

describe(`at RATE_LIMIT_PER_KEY=1 and RATE_LIMIT_BURST=30, five replays of ${STORED} stored pets from the first cursor`, () => {
  const server = useTestServer({ rateLimits: { perKey: { rate: 1, burst: 30 }, authFailures: OFF } });

  it('leave at most 15 of 30 following GETs passing: the replays paid for their pages', async () => {
    await storePets(server);
    const streams = await Promise.all(Array.from({ length: 5 }, () => resume(server)));
    try {
      for (const stream of streams) expect(stream.status).toBe(200);
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
});

describe('a replay its key cannot pay for at once', () => {
  const server = useTestServer({ rateLimits: { perKey: { rate: 2, burst: 2 }, authFailures: OFF } });

  it('waits for its points and then goes on: every pet once, in order, the stream never cut', async () => {
    await storePets(server);
    const stream = await resume(server);
    try {
      expect(stream.status).toBe(200);
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
