import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPetOverGraphQL } from './support/graphql-client.ts';
import { AUTH, startTestServer, type TestServer, uniqueDbName } from './support/test-server.ts';

/** `count` createPet requests at once, spread over the servers in turn; returns the ids they got. */
async function createMany(servers: TestServer[], count: number, prefix: string): Promise<number[]> {
  const pets = await Promise.all(
    Array.from({ length: count }, (_, index) =>
      createPetOverGraphQL(servers[index % servers.length]!, { name: `${prefix} ${index}`, categoryId: 1 }),
    ),
  );
  return pets.map((pet) => Number(pet.id));
}

describe('id allocation under concurrency', () => {
  let first: TestServer;
  let second: TestServer;

  beforeAll(async () => {
    // Two service instances over one database, as in a horizontally scaled deployment.
    const dbName = uniqueDbName('concurrency');
    first = await startTestServer({ dbName });
    second = await startTestServer({ dbName });
  });
  afterAll(async () => {
    await first.close();
    await second.close();
  });

  it('when 100 createPet requests arrive at once, then they get 100 distinct ids and all are stored', async () => {
    const ids = await createMany([first], 100, 'Burst');
    expect(new Set(ids).size).toBe(100);
    const stored = await first.database.db.collection('pets').countDocuments({ name: /^Burst / });
    expect(stored).toBe(100);
  });

  it('when two instances share a database, then their ids never collide', async () => {
    const ids = await createMany([first, second], 100, 'Shared');
    expect(new Set(ids).size).toBe(100);
    const all = await first.database.db
      .collection('pets')
      .find({}, { projection: { _id: 1 } })
      .toArray();
    expect(new Set(all.map((doc) => doc._id)).size).toBe(all.length);
  });

  it('when the counter falls behind the stored ids, then creation skips past them instead of failing', async () => {
    // What a lost non-atomic increment on FerretDB leaves behind: a counter below the highest id.
    await first.database.db
      .collection<{ _id: string; seq: number }>('counters')
      .updateOne({ _id: 'petId' }, { $set: { seq: 1 } });
    const [id] = await createMany([first], 1, 'After reset');
    const highest = await first.database.db.collection('pets').find().sort({ _id: -1 }).limit(1).next();
    expect(id).toBe(highest?._id);
    expect(id).toBeGreaterThan(200);
  });

  it('when the counter falls behind, then a create with an Idempotency-Key skips past the stored ids too', async () => {
    // A keyed create records its id before it stores the pet; a taken id must move the counter up,
    // not only the record, or it collides again and again (seen as 500s over a fleet on FerretDB).
    await first.database.db
      .collection<{ _id: string; seq: number }>('counters')
      .updateOne({ _id: 'petId' }, { $set: { seq: 1 } });
    const response = await first.request
      .post('/v1/pets')
      .set({ ...AUTH, 'Idempotency-Key': 'behind-the-counter' })
      .send({ name: 'Keyed after reset', categoryId: 1 });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const highest = await first.database.db.collection('pets').find().sort({ _id: -1 }).limit(1).next();
    expect(response.body.id).toBe(highest?._id);
  });
});
