import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectContract, expectError } from './support/openapi-contract.ts';
import { AUTH, startTestServer, type TestServer } from './support/test-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  for (const [index, status] of ['available', 'pending', 'sold', undefined].entries()) {
    const response = await postRaw(JSON.stringify({ name: `Seed ${index}`, categoryId: 1, ...(status ? { status } : {}) }));
    expect(response.status).toBe(201);
  }
});
afterAll(async () => server.close());

async function listPets(query: string) {
  return expectContract(await server.request.get(`/v1/pets${query}`).set(AUTH), 'GET', '/pets');
}

async function getPet(rawPetId: string) {
  return expectContract(await server.request.get(`/v1/pets/${rawPetId}`).set(AUTH), 'GET', '/pets/{petId}');
}

async function postRaw(text: string) {
  const response = await server.request.post('/v1/pets').set(AUTH).type('application/json').send(text);
  return expectContract(response, 'POST', '/pets');
}

/** Every stored pet, through the contract itself (this file stores far fewer than 100). */
async function storedPets(): Promise<unknown[]> {
  const response = await listPets('?limit=100');
  expect(response.status).toBe(200);
  expect(response.body.length).toBeLessThan(100);
  return response.body;
}

describe('query parameters of listPets', () => {
  it.each([
    ['0 (below the minimum 1)', 'limit=0'],
    ['101 (above the maximum 100)', 'limit=101'],
    ['-1', 'limit=-1'],
    ['abc', 'limit=abc'],
    ['1.5', 'limit=1.5'],
    ['1e1', 'limit=1e1'],
    ['empty', 'limit='],
    ['given without a value', 'limit'],
    ['99999999999999999999 (beyond any integer type)', 'limit=99999999999999999999'],
    ['repeated', 'limit=2&limit=3'],
    ['repeated with the same value', 'limit=2&limit=2'],
  ])('refuses limit %s with 400 BAD_USER_INPUT naming limit', async (_what, query) => {
    const response = await listPets(`?${query}`);
    expectError(response, 400, 'BAD_USER_INPUT', 'limit');
  });

  it.each([
    ['SOLD (upper case)', 'status=SOLD'],
    ['Available (mixed case)', 'status=Available'],
    ['lost (not a PetStatus)', 'status=lost'],
    ['empty', 'status='],
    ['repeated', 'status=sold&status=pending'],
    ['with a trailing space', 'status=sold%20'],
  ])('refuses status %s with 400 BAD_USER_INPUT naming status', async (_what, query) => {
    const response = await listPets(`?${query}`);
    expectError(response, 400, 'BAD_USER_INPUT', 'status');
  });

  it.each([
    ['not base64 of ours', 'cursor=nonsense'],
    ['empty', 'cursor='],
    ['pointing at id 0', `cursor=${Buffer.from('pet:0').toString('base64url')}`],
    ['in padded base64', `cursor=${Buffer.from('pet:1').toString('base64')}`],
    ['of another kind', `cursor=${Buffer.from('order:1').toString('base64url')}`],
    ['longer than 64 characters', `cursor=${'A'.repeat(65)}`],
    ['repeated', `cursor=${Buffer.from('pet:1').toString('base64url')}&cursor=${Buffer.from('pet:2').toString('base64url')}`],
  ])('refuses a cursor %s with 400 BAD_USER_INPUT naming cursor', async (_what, query) => {
    const response = await listPets(`?${query}`);
    expectError(response, 400, 'BAD_USER_INPUT', 'cursor');
  });

  it.each([
    ['1 (the minimum)', 'limit=1', 1],
    ['100 (the maximum)', 'limit=100', 100],
  ])('accepts limit %s', async (_what, query, max) => {
    const response = await listPets(`?${query}`);
    expect(response.status).toBe(200);
    expect(response.body.length).toBeGreaterThan(0);
    expect(response.body.length).toBeLessThanOrEqual(max);
  });

  it.each(['available', 'pending', 'sold'])('accepts status %j', async (status) => {
    const response = await listPets(`?status=${status}`);
    expect(response.status).toBe(200);
    expect(response.body.every((pet: { status?: string }) => pet.status === status)).toBe(true);
  });

  it('ignores query parameters the contract does not define', async () => {
    const response = await listPets('?limit=1&colour=red');
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(1);
  });
});

describe('the petId path parameter of getPet', () => {
  it.each([
    ['abc', 'abc'],
    ['0', '0'],
    ['-1', '-1'],
    ['1.5', '1.5'],
    ['1e3', '1e3'],
    ['2^53 (9007199254740992), beyond the exact int64 range', '9007199254740992'],
    ['99999999999999999999', '99999999999999999999'],
    ['a space', '%20'],
  ])('refuses petId %s with 400 BAD_USER_INPUT naming petId', async (_what, petId) => {
    const response = await getPet(petId);
    expectError(response, 400, 'BAD_USER_INPUT', 'petId');
  });
});

describe('NewPet strictness (POST /v1/pets)', () => {
  it.each([
    ['an unknown field', { name: 'x', categoryId: 1, colour: 'red' }, 'colour'],
    ['an id', { id: 5, name: 'x', categoryId: 1 }, 'id'],
    ['no name', { categoryId: 1 }, 'name'],
    ['no categoryId', { name: 'x' }, 'categoryId'],
    ['a name that is a number', { name: 12, categoryId: 1 }, 'name'],
    ['a categoryId that is a string "5"', { name: 'x', categoryId: '5' }, 'categoryId'],
    ['a status that is a number', { name: 'x', categoryId: 1, status: 5 }, 'status'],
    ['a null name', { name: null, categoryId: 1 }, 'name'],
    ['a null categoryId', { name: 'x', categoryId: null }, 'categoryId'],
    ['a null status', { name: 'x', categoryId: 1, status: null }, 'status'],
    ['a fractional categoryId 1.5', { name: 'x', categoryId: 1.5 }, 'categoryId'],
    ['a categoryId 2^53, beyond the exact int64 range', { name: 'x', categoryId: 2 ** 53 }, 'categoryId'],
    ['a categoryId -1', { name: 'x', categoryId: -1 }, 'categoryId'],
    ['a categoryId 0', { name: 'x', categoryId: 0 }, 'categoryId'],
    ['a categoryId true', { name: 'x', categoryId: true }, 'categoryId'],
    ['an empty name', { name: '', categoryId: 1 }, 'name'],
    ['a blank name', { name: '   ', categoryId: 1 }, 'name'],
    ['a name of Unicode spaces only', { name: '\u00a0\u3000\ufeff\u2028', categoryId: 1 }, 'name'],
    ['a name of 101 characters', { name: 'x'.repeat(101), categoryId: 1 }, 'name'],
    ['a name of 101 emoji', { name: '🐶'.repeat(101), categoryId: 1 }, 'name'],
    ['a name with a lone surrogate', { name: 'a\ud800b', categoryId: 1 }, 'name'],
    ['a name that is an object', { name: { first: 'x' }, categoryId: 1 }, 'name'],
    ['an upper-case status SOLD', { name: 'x', categoryId: 1, status: 'SOLD' }, 'status'],
    ['an unknown status', { name: 'x', categoryId: 1, status: 'lost' }, 'status'],
    ['an empty status', { name: 'x', categoryId: 1, status: '' }, 'status'],
  ])('when the body has %s, then 400 BAD_USER_INPUT naming the field and nothing is stored', async (_what, body, field) => {
    const before = await storedPets();
    const response = await postRaw(JSON.stringify(body));
    expectError(response, 400, 'BAD_USER_INPUT', field);
    expect(await storedPets()).toEqual(before);
  });

  it.each([
    ['an array', [{ name: 'x', categoryId: 1 }]],
    ['an empty array', []],
    ['a string', 'name'],
    ['a number', 5],
    ['a boolean', true],
    ['null', null],
  ])('when the body is %s, then 400 BAD_USER_INPUT and nothing is stored', async (_what, body) => {
    const before = await storedPets();
    const response = await postRaw(JSON.stringify(body));
    expectError(response, 400, 'BAD_USER_INPUT');
    expect(await storedPets()).toEqual(before);
  });

  it('when the body is an empty object, then 400 BAD_USER_INPUT naming a required field and nothing is stored', async () => {
    const before = await storedPets();
    const response = await postRaw('{}');
    expectError(response, 400, 'BAD_USER_INPUT');
    expect(response.body.message).toMatch(/\b(name|categoryId)\b/);
    expect(await storedPets()).toEqual(before);
  });

  it('accepts categoryId written as 1.0, an integer in JSON Schema terms', async () => {
    const response = await postRaw('{"name":"Float form","categoryId":1.0}');
    expect(response.status).toBe(201);
    expect(response.body.categoryId).toBe(1);
  });
});
