import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configuredKeyId } from '../src/auth/api-keys.ts';
import {
  IDEMPOTENCY_COLLECTION,
  type IdempotencyRecord,
  idempotencyRecordId,
} from '../src/idempotency/idempotency-store.ts';
import { fingerprintOf } from '../src/idempotency/idempotent-create.ts';
import { executeGraphQL, firstError } from './support/graphql-client.ts';
import { CreatePetDocument } from './support/operations.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { API_KEY, AUTH, OTHER_API_KEY, startTestServer, useTestServer } from './support/test-server.ts';

const server = useTestServer();
const rest = restClient(server);
const withKey = (key: string, auth = AUTH) => ({ ...auth, 'Idempotency-Key': key });
const records = () => server.database.db.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION);
const storedNamed = (name: string) => server.database.db.collection('pets').countDocuments({ name });

describe('POST /v1/pets with an Idempotency-Key', () => {
  it('replays the first answer for a retry with the same body: same status, body and Location, one pet', async () => {
    const key = randomUUID();
    const first = await rest.createPet({ name: 'Once', categoryId: 4, status: 'sold' }, withKey(key));
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same pet spelled differently is the same request.
    const retry = await rest.createPet({ status: 'sold', categoryId: 4, name: 'Once' }, withKey(key));
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(await storedNamed('Once')).toBe(1);
  });

  it('refuses the same key with another body: 422 IDEMPOTENCY_KEY_REUSED, nothing stored', async () => {
    const key = randomUUID();
    expect((await rest.createPet({ name: 'First', categoryId: 1 }, withKey(key))).status).toBe(201);
    const other = await rest.createPet({ name: 'Second', categoryId: 1 }, withKey(key));
    expect(other.status).toBe(422);
    expect(other.body).toEqual({ code: 'IDEMPOTENCY_KEY_REUSED', message: expect.any(String), status: 422 });
    expect(await storedNamed('Second')).toBe(0);
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_USE with Retry-After while the first request with the key runs', async () => {
    const key = randomUUID();
    const body = { name: 'Twice at once', categoryId: 2 };
    const [a, b] = await Promise.all([rest.createPet(body, withKey(key)), rest.createPet(body, withKey(key))]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([201, 409]);
    const refused = a.status === 409 ? a : b;
    expect(refused.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE', status: 409 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await storedNamed('Twice at once')).toBe(1);
  });

  it('answers 409 when another instance holds the key and has not stored the pet yet', async () => {
    const key = randomUUID();
    const body = { name: 'Elsewhere', categoryId: 1 };
    await records().insertOne({
      _id: idempotencyRecordId(configuredKeyId(API_KEY), key),
      fingerprint: fingerprintOf(body),
      petId: 9_000_000_001,
      createdAt: new Date(),
    });
    const response = await rest.createPet(body, withKey(key));
    expect(response.status).toBe(409);
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(9);
    expect(await storedNamed('Elsewhere')).toBe(0);
  });

  it('finishes a request whose answer was lost: the retry stores the pet under the id it recorded, once', async () => {
    const key = randomUUID();
    const body = { name: 'Lost answer', categoryId: 5 };
    // What an instance leaves behind when it recorded the key and then died (or its client gave up).
    const first = await rest.createPet(body, withKey(key));
    expectStatus(first, 201);
    await server.database.db.collection<{ _id: number }>('pets').deleteOne({ _id: first.body.id });
    await records().updateOne(
      { _id: idempotencyRecordId(configuredKeyId(API_KEY), key) },
      { $set: { createdAt: new Date(Date.now() - 60_000) } },
    );
    const retry = await rest.createPet(body, withKey(key));
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(await storedNamed('Lost answer')).toBe(1);
  });

  it('scopes keys per API key: another client with the same key creates its own pet', async () => {
    const key = randomUUID();
    const body = { name: 'Scoped', categoryId: 6 };
    const mine = await rest.createPet(body, withKey(key));
    const theirs = await rest.createPet(body, withKey(key, { Authorization: `Bearer ${OTHER_API_KEY}` }));
    expectStatus(mine, 201);
    expectStatus(theirs, 201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('forgets a key after the retention: the same key then creates a new pet, and the purge removes old records', async () => {
    const key = randomUUID();
    const body = { name: 'Expired key', categoryId: 7 };
    const first = await rest.createPet(body, withKey(key));
    const id = idempotencyRecordId(configuredKeyId(API_KEY), key);
    await records().updateOne({ _id: id }, { $set: { createdAt: new Date(Date.now() - 25 * 3_600_000) } });
    const again = await rest.createPet(body, withKey(key));
    expectStatus(first, 201);
    expectStatus(again, 201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.id).not.toBe(first.body.id);

    await records().updateOne({ _id: id }, { $set: { createdAt: new Date(Date.now() - 25 * 3_600_000) } });
    // A service purges expired records when it starts (and every 10 minutes).
    const restarted = await startTestServer({ dbName: server.dbName, keepDatabase: true });
    await expect.poll(() => records().countDocuments({ _id: id }), { timeout: 5_000 }).toBe(0);
    await restarted.close();
  });

  it.each([
    ['empty', '""'],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['not visible ASCII', 'tab\there'],
  ])('refuses a key that is %s with 400 BAD_USER_INPUT, storing nothing', async (_case, key) => {
    const response = await rest.storesNothing(() => rest.createPet({ name: 'Bad key', categoryId: 1 }, withKey(key)));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringContaining('Idempotency-Key'),
    });
  });

  it('refuses two Idempotency-Key fields in one request (Node would join them into one key)', async () => {
    const response = await server.request
      .post('/v1/pets')
      .set(AUTH)
      // superagent sends an array as repeated fields; its types allow that for Cookie only.
      .set('Idempotency-Key', ['first', 'second'] as unknown as string)
      .send({ name: 'Two keys', categoryId: 1 });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('Idempotency-Key');
    expect(await storedNamed('Two keys')).toBe(0);
  });

  it('takes a key of exactly 255 characters, and the quoted form of the IETF draft as the same key', async () => {
    const key = 'k'.repeat(255);
    const body = { name: 'Long key', categoryId: 8 };
    expect((await rest.createPet(body, withKey(key))).status).toBe(201);
    const quoted = await rest.createPet(body, withKey(`"${key}"`));
    expect(quoted.headers['idempotent-replayed']).toBe('true');
  });
});

describe('createPet over GraphQL with an Idempotency-Key', () => {
  const create = (name: string, key: string) =>
    executeGraphQL(server, CreatePetDocument, { input: { name, categoryId: 9 } }, withKey(key));

  it('replays the first result with Idempotent-Replayed, shares keys with REST, and refuses another input with 422', async () => {
    const key = randomUUID();
    const first = await create('Graph once', key);
    expect(first.status).toBe(200);
    const retry = await create('Graph once', key);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await storedNamed('Graph once')).toBe(1);

    const other = await create('Graph other', key);
    expect(other.status).toBe(422);
    expect(firstError(other).extensions).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('refuses an over-long key with 400, and a second createPet under one key in one request', async () => {
    expect((await create('Graph long', 'k'.repeat(256))).status).toBe(400);
    const twice = await executeGraphQL(
      server,
      'mutation { a: createPet(input: {name: "Graph twice", categoryId: 1}) { id } b: createPet(input: {name: "Graph twice", categoryId: 1}) { id } }',
      {},
      withKey(randomUUID()),
    );
    expect(firstError(twice).extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'Idempotency-Key' });
    expect(await storedNamed('Graph twice')).toBe(1);
  });
});
