import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectContract, expectError, loadOpenApiDocument } from './support/openapi-contract.ts';
import { AUTH, graphqlRequest, startTestServer, type TestServer } from './support/test-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

async function listPets(query = '') {
  return expectContract(await server.request.get(`/v1/pets${query}`).set(AUTH), 'GET', '/pets');
}

async function createPet(body: unknown) {
  const response = await server.request.post('/v1/pets').set(AUTH).type('application/json').send(JSON.stringify(body));
  return expectContract(response, 'POST', '/pets');
}

async function getPet(petId: string | number) {
  return expectContract(await server.request.get(`/v1/pets/${petId}`).set(AUTH), 'GET', '/pets/{petId}');
}

async function created(body: Record<string, unknown>): Promise<{ id: number } & Record<string, unknown>> {
  const response = await createPet(body);
  expect(response.status, response.text).toBe(201);
  return response.body;
}

describe('createPet (POST /v1/pets)', () => {
  it('when a client adds a pet, then it gets 201 with the pet, its assigned id and its Location', async () => {
    const response = await createPet({ name: 'Rex', categoryId: 7, status: 'available' });
    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 7, status: 'available' });
    expect(Number.isSafeInteger(response.body.id) && response.body.id > 0).toBe(true);
    expect(response.headers.location).toBe(`/v1/pets/${response.body.id}`);
  });

  it('when a pet is added, then its Location serves the same pet', async () => {
    const response = await createPet({ name: 'Tom', categoryId: 2, status: 'pending' });
    expect(response.status).toBe(201);
    const fetched = expectContract(await server.request.get(response.headers.location!).set(AUTH), 'GET', '/pets/{petId}');
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(response.body);
  });

  it('when pets are added, then each gets a new, larger id', async () => {
    const first = await created({ name: 'A', categoryId: 1 });
    const second = await created({ name: 'B', categoryId: 1 });
    expect(second.id).toBeGreaterThan(first.id);
  });

  it.each(['available', 'pending', 'sold'])('accepts and returns the status %j', async (status) => {
    const pet = await created({ name: `S ${status}`, categoryId: 3, status });
    expect(pet.status).toBe(status);
  });

  it('keeps the largest exact int64 categoryId exactly', async () => {
    const pet = await created({ name: 'Big', categoryId: Number.MAX_SAFE_INTEGER });
    expect(pet.categoryId).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('counts the name in characters: 100 emoji (200 UTF-16 units) are a valid name, returned unchanged', async () => {
    const name = '🐶'.repeat(100);
    const pet = await created({ name, categoryId: 1 });
    expect(pet.name).toBe(name);
    const fetched = await getPet(pet.id);
    expect(fetched.body.name).toBe(name);
  });

  it('accepts a name of exactly 100 characters and one with inner and outer spaces, unchanged', async () => {
    const long = await created({ name: 'x'.repeat(100), categoryId: 1 });
    expect(long.name).toBe('x'.repeat(100));
    const spaced = await created({ name: '  Mr  Whiskers ', categoryId: 1 });
    expect(spaced.name).toBe('  Mr  Whiskers ');
  });
});

describe('a pet created without status', () => {
  let id: number;

  beforeAll(async () => {
    const response = await createPet({ name: 'Nobody', categoryId: 4 });
    expect(response.status).toBe(201);
    id = response.body.id;
  });

  it('when the status is omitted on creation, then the POST response has no status field (not null)', async () => {
    const response = await createPet({ name: 'Nobody too', categoryId: 4 });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ id: expect.any(Number), name: 'Nobody too', categoryId: 4 });
    expect(response.text).not.toContain('status');
  });

  it('when fetched by id, then it still has no status field', async () => {
    const response = await getPet(id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id, name: 'Nobody', categoryId: 4 });
    expect(response.text).not.toContain('status');
  });

  it('when listed, then it has no status field and no null anywhere', async () => {
    const response = await listPets('?limit=100');
    expect(response.status).toBe(200);
    const listed = (response.body as Array<Record<string, unknown>>).find((pet) => pet.id === id);
    expect(listed).toEqual({ id, name: 'Nobody', categoryId: 4 });
    expect(response.text).not.toContain('null');
  });

  it('when listing by a status, then it is not among the results of any status', async () => {
    for (const status of ['available', 'pending', 'sold']) {
      const response = await listPets(`?status=${status}&limit=100`);
      expect(response.status).toBe(200);
      expect(response.body.map((pet: { id: number }) => pet.id)).not.toContain(id);
    }
  });
});

describe('listPets (GET /v1/pets)', () => {
  it('answers 200 with a bare JSON array of pets in ascending id order', async () => {
    await created({ name: 'Listed', categoryId: 5, status: 'sold' });
    const response = await listPets();
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(Array.isArray(response.body)).toBe(true);
    expect(response.text.startsWith('[')).toBe(true);
    const ids = response.body.map((pet: { id: number }) => pet.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
  });

  it('when filtered by status, then only pets with that status come back', async () => {
    const sold = await created({ name: 'Sold one', categoryId: 5, status: 'sold' });
    const response = await listPets('?status=sold&limit=100');
    expect(response.status).toBe(200);
    expect(response.body.length).toBeGreaterThan(0);
    expect(response.body.every((pet: { status?: string }) => pet.status === 'sold')).toBe(true);
    expect(response.body).toContainEqual(sold);
  });

  it('when the status filter matches nothing, then the body is an empty array', async () => {
    const fresh = await startTestServer();
    try {
      const response = expectContract(await fresh.request.get('/v1/pets?status=pending').set(AUTH), 'GET', '/pets');
      expect(response.status).toBe(200);
      expect(response.body).toEqual([]);
      expect(response.headers.link).toBeUndefined();
    } finally {
      await fresh.close();
    }
  });
});

describe('getPet (GET /v1/pets/{petId})', () => {
  it('answers 200 with the pet that has this id', async () => {
    const pet = await created({ name: 'Lookup', categoryId: 9, status: 'pending' });
    const response = await getPet(pet.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(pet);
  });

  it('answers 404 PET_NOT_FOUND for a valid id that no pet has', async () => {
    const newest = await created({ name: 'Newest', categoryId: 1 });
    const response = await getPet(newest.id + 1000);
    expectError(response, 404, 'PET_NOT_FOUND');
  });

  it('answers 404 PET_NOT_FOUND for the largest valid id 2^53-1', async () => {
    const response = await getPet(Number.MAX_SAFE_INTEGER);
    expectError(response, 404, 'PET_NOT_FOUND');
  });
});

describe('GET /v1/openapi.json', () => {
  it('serves the contract as JSON without authentication', async () => {
    const response = await server.request.get('/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body.openapi).toMatch(/^3\.1\.\d+$/);
    const operationIds = Object.values(response.body.paths as Record<string, Record<string, { operationId?: string }>>)
      .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
      .sort();
    expect(operationIds).toEqual(['createPet', 'getPet', 'listPets']);
  });

  it('serves exactly the committed schema/openapi.yaml', async () => {
    const response = await server.request.get('/v1/openapi.json').set(AUTH);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(loadOpenApiDocument());
  });
});

describe('REST and GraphQL views of the same pet', () => {
  const GET = /* GraphQL */ `query Get($id: ID!) { pet(id: $id) { id name categoryId status } }`;
  const LIST = /* GraphQL */ `query List($status: PetStatus) { pets(limit: 100, status: $status) { id name categoryId status } }`;
  const CREATE = /* GraphQL */ `
    mutation Create($input: NewPet!) { createPet(input: $input) { id name categoryId status } }
  `;

  it('when a pet is created over REST, then GraphQL pet(id) shows it with the id as a string and the enum name', async () => {
    const pet = await created({ name: 'Both', categoryId: 11, status: 'available' });
    const response = await graphqlRequest(server, GET, { id: String(pet.id) });
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.pet).toEqual({ id: String(pet.id), name: 'Both', categoryId: 11, status: 'AVAILABLE' });
  });

  it('when a pet without status is created over REST, then GraphQL shows status null', async () => {
    const pet = await created({ name: 'Bare', categoryId: 12 });
    const single = await graphqlRequest(server, GET, { id: String(pet.id) });
    expect(single.body.data.pet).toEqual({ id: String(pet.id), name: 'Bare', categoryId: 12, status: null });
    const list = await graphqlRequest(server, LIST);
    expect(list.body.data.pets).toContainEqual({ id: String(pet.id), name: 'Bare', categoryId: 12, status: null });
  });

  it.each([
    ['SOLD', 'sold'],
    ['PENDING', 'pending'],
    ['AVAILABLE', 'available'],
  ])('when a pet is created over GraphQL with %s, then REST shows it with status %j', async (name, value) => {
    const response = await graphqlRequest(server, CREATE, { input: { name: `GraphQL ${name}`, categoryId: 13, status: name } });
    expect(response.body.errors).toBeUndefined();
    const pet = response.body.data.createPet;
    const expected = { id: Number(pet.id), name: `GraphQL ${name}`, categoryId: 13, status: value };
    const fetched = await getPet(pet.id);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(expected);
    const listed = await listPets(`?status=${value}&limit=100`);
    expect(listed.body).toContainEqual(expected);
  });

  it('when a pet without status is created over GraphQL, then REST omits the status field', async () => {
    const response = await graphqlRequest(server, CREATE, { input: { name: 'GraphQL bare', categoryId: 14 } });
    const pet = response.body.data.createPet;
    expect(pet.status).toBeNull();
    const fetched = await getPet(pet.id);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual({ id: Number(pet.id), name: 'GraphQL bare', categoryId: 14 });
  });

  it('lists the same pets in the same order over REST and over GraphQL', async () => {
    const rest = await listPets('?limit=100');
    const graphql = await graphqlRequest(server, LIST);
    expect(rest.body.length).toBeLessThan(100);
    const asRest = graphql.body.data.pets.map((pet: { id: string; name: string; categoryId: number; status: string | null }) => {
      const converted: Record<string, unknown> = { id: Number(pet.id), name: pet.name, categoryId: pet.categoryId };
      if (pet.status !== null) converted.status = pet.status.toLowerCase();
      return converted;
    });
    expect(rest.body).toEqual(asRest);
  });
});
