import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH, graphqlRequest, startTestServer, type TestServer } from './support/test-server.ts';

const CREATE = /* GraphQL */ `
  mutation Create($input: NewPet!) {
    createPet(input: $input) { id name categoryId status }
  }
`;
const LIST = /* GraphQL */ `
  query List($limit: Int, $status: PetStatus, $after: String) {
    pets(limit: $limit, status: $status, after: $after) { id name status }
  }
`;
const CONNECTION = /* GraphQL */ `
  query Page($first: Int, $after: String, $status: PetStatus) {
    petsConnection(first: $first, after: $after, status: $status) {
      edges { cursor node { id name } }
      pageInfo { hasNextPage hasPreviousPage endCursor }
    }
  }
`;
const GET = /* GraphQL */ `
  query Get($id: ID!) { pet(id: $id) { id name categoryId status } }
`;

let server: TestServer;

async function create(input: Record<string, unknown>) {
  const response = await graphqlRequest(server, CREATE, { input });
  expect(response.body.errors).toBeUndefined();
  return response.body.data.createPet as { id: string; name: string; categoryId: number; status: string | null };
}

async function expectBadInput(query: string, variables: Record<string, unknown>, field: string) {
  const response = await graphqlRequest(server, query, variables);
  expect(response.body.errors, JSON.stringify(response.body)).toHaveLength(1);
  expect(response.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
  expect(response.body.errors[0].message).toContain(`"${field}"`);
  return response;
}

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

describe('createPet', () => {
  it('when a client adds a pet, then it gets the pet back with a new decimal id', async () => {
    const pet = await create({ name: 'Rex', categoryId: 7, status: 'AVAILABLE' });
    expect(pet).toMatchObject({ name: 'Rex', categoryId: 7, status: 'AVAILABLE' });
    expect(pet.id).toMatch(/^[1-9][0-9]*$/);
  });

  it('when the status is omitted, then the pet has none (no default is invented)', async () => {
    const pet = await create({ name: 'Nobody', categoryId: 1 });
    expect(pet.status).toBeNull();
    const fetched = await graphqlRequest(server, GET, { id: pet.id });
    expect(fetched.body.data.pet.status).toBeNull();
  });

  it('when ids are assigned, then they increase one by one', async () => {
    const first = await create({ name: 'A', categoryId: 1 });
    const second = await create({ name: 'B', categoryId: 1 });
    expect(Number(second.id)).toBe(Number(first.id) + 1);
  });

  it('keeps the largest exact int64 categoryId exactly', async () => {
    const pet = await create({ name: 'Big', categoryId: Number.MAX_SAFE_INTEGER });
    expect(pet.categoryId).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('counts the name length in characters, so 100 emoji are a valid name', async () => {
    const pet = await create({ name: '🐶'.repeat(100), categoryId: 1 });
    expect([...pet.name]).toHaveLength(100);
  });

  it.each([
    ['a blank name', { name: '   ', categoryId: 1 }, 'input.name', 'must not be blank'],
    ['an empty name', { name: '', categoryId: 1 }, 'input.name', 'must not be blank'],
    ['a name over 100 characters', { name: 'x'.repeat(101), categoryId: 1 }, 'input.name', 'at most 100'],
    ['a name that is not a string', { name: 12, categoryId: 1 }, 'input.name', 'String'],
    ['a null name', { name: null, categoryId: 1 }, 'input.name', 'must not be null'],
    ['no name', { categoryId: 1 }, 'input.name', 'is required'],
    ['no categoryId', { name: 'x' }, 'input.categoryId', 'is required'],
    ['a fractional categoryId', { name: 'x', categoryId: 1.5 }, 'input.categoryId', 'Int64'],
    ['a categoryId beyond 2^53-1', { name: 'x', categoryId: 2 ** 53 }, 'input.categoryId', 'Int64'],
    ['a categoryId as a string', { name: 'x', categoryId: '5' }, 'input.categoryId', 'Int64'],
    ['a zero categoryId', { name: 'x', categoryId: 0 }, 'input.categoryId', 'positive'],
    ['a negative categoryId', { name: 'x', categoryId: -3 }, 'input.categoryId', 'positive'],
    ['an unknown status', { name: 'x', categoryId: 1, status: 'LOST' }, 'input.status', 'PetStatus'],
    ['a null status', { name: 'x', categoryId: 1, status: null }, 'input.status', 'must not be null'],
    ['an id', { name: 'x', categoryId: 1, id: 5 }, 'input.id', 'not a known field'],
    ['an unknown field', { name: 'x', categoryId: 1, colour: 'red' }, 'input.colour', 'not a known field'],
  ])('when a client sends %s, then it gets BAD_USER_INPUT naming the field and nothing is stored', async (_what, input, field, reason) => {
    const before = await graphqlRequest(server, LIST, { limit: 100 });
    const response = await expectBadInput(CREATE, { input }, field);
    expect(response.body.errors[0].extensions.reason).toContain(reason);
    expect(response.body.data ?? null).toBeNull();
    const after = await graphqlRequest(server, LIST, { limit: 100 });
    expect(after.body.data.pets).toEqual(before.body.data.pets);
  });

  it('when the input variable is missing, then it gets BAD_USER_INPUT for "input"', async () => {
    await expectBadInput(CREATE, {}, 'input');
  });

  it('refuses a categoryId literal beyond 2^53-1 in the document itself', async () => {
    // GraphQL over HTTP: with the official media type, a document that fails validation is a 400.
    const response = await server.request
      .post('/graphql')
      .set(AUTH)
      .set('Accept', 'application/graphql-response+json')
      .send({ query: `mutation { createPet(input: { name: "x", categoryId: 9007199254740993 }) { id } }` });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].message).toContain('Int64');
  });
});

describe('pets and petsConnection', () => {
  let ids: string[];

  beforeAll(async () => {
    ids = [];
    for (const [index, status] of ['AVAILABLE', 'SOLD', 'AVAILABLE', 'PENDING', 'AVAILABLE'].entries()) {
      ids.push((await create({ name: `Page ${index}`, categoryId: 2, status })).id);
    }
  });

  it('lists pets in ascending id order, 20 by default', async () => {
    const response = await graphqlRequest(server, LIST, {});
    const listed = response.body.data.pets.map((pet: { id: string }) => Number(pet.id));
    expect(listed.length).toBeLessThanOrEqual(20);
    expect(listed).toEqual([...listed].sort((a: number, b: number) => a - b));
  });

  it('filters by status', async () => {
    const response = await graphqlRequest(server, LIST, { status: 'SOLD', limit: 100 });
    expect(response.body.data.pets.length).toBeGreaterThan(0);
    expect(response.body.data.pets.every((pet: { status: string }) => pet.status === 'SOLD')).toBe(true);
  });

  it('pages through every matching pet with the opaque cursor, without repeats', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const response = await graphqlRequest(server, CONNECTION, { first: 2, after, status: 'AVAILABLE' });
      const { edges, pageInfo } = response.body.data.petsConnection;
      seen.push(...edges.map((edge: { node: { id: string } }) => edge.node.id));
      pages += 1;
      expect(pageInfo.hasPreviousPage).toBe(false);
      if (!pageInfo.hasNextPage) break;
      expect(edges.at(-1).cursor).toBe(pageInfo.endCursor);
      after = pageInfo.endCursor;
    }
    const expected = [ids[0], ids[2], ids[4]];
    expect(seen.filter((id) => expected.includes(id))).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBeGreaterThan(1);
  });

  it('continues `pets(after:)` from a connection cursor', async () => {
    const first = await graphqlRequest(server, CONNECTION, { first: 1 });
    const cursor = first.body.data.petsConnection.pageInfo.endCursor;
    const next = await graphqlRequest(server, LIST, { after: cursor, limit: 1 });
    const firstId = Number(first.body.data.petsConnection.edges[0].node.id);
    expect(Number(next.body.data.pets[0].id)).toBeGreaterThan(firstId);
  });

  it('has no next page and a null endCursor past the end', async () => {
    const last = await graphqlRequest(server, CONNECTION, { first: 100 });
    const after = last.body.data.petsConnection.pageInfo.endCursor;
    const beyond = await graphqlRequest(server, CONNECTION, { first: 5, after });
    expect(beyond.body.data.petsConnection).toEqual({ edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, endCursor: null } });
  });

  it.each([0, 101, -1])('refuses limit %i with BAD_USER_INPUT', async (limit) => {
    await expectBadInput(LIST, { limit }, 'limit');
  });

  it.each([0, 101])('refuses first %i with BAD_USER_INPUT', async (first) => {
    await expectBadInput(CONNECTION, { first }, 'first');
  });

  it.each(['nonsense', '', 'cGV0OjA', 'cGV0OjE='])('refuses the cursor %j', async (after) => {
    await expectBadInput(LIST, { after }, 'after');
  });
});

describe('pet(id) (deprecated)', () => {
  it('returns the pet with that id', async () => {
    const pet = await create({ name: 'Lookup', categoryId: 3, status: 'PENDING' });
    const response = await graphqlRequest(server, GET, { id: pet.id });
    expect(response.body.data.pet).toEqual(pet);
  });

  it('returns null, not an error, when there is no such pet', async () => {
    const response = await graphqlRequest(server, GET, { id: '987654321' });
    expect(response.body).toEqual({ data: { pet: null } });
  });

  it.each(['abc', '-1', '0', '1.5', '9007199254740992', ''])('refuses the id %j with BAD_USER_INPUT', async (id) => {
    await expectBadInput(GET, { id }, 'id');
  });

  it('is marked deprecated in introspection with the removal date', async () => {
    const response = await graphqlRequest(
      server,
      `{ __type(name: "Query") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }`,
    );
    const field = response.body.data.__type.fields.find((candidate: { name: string }) => candidate.name === 'pet');
    expect(field.isDeprecated).toBe(true);
    expect(field.deprecationReason).toContain('5 December 2030');
  });
});

describe('errors', () => {
  it('masks unexpected errors as INTERNAL_SERVER_ERROR without internals', async () => {
    // Closing the app's database client makes the repository throw a driver error we did not plan for.
    const broken = await startTestServer();
    await broken.database.client.close();
    const response = await graphqlRequest(broken, LIST, {});
    expect(response.body.errors[0].message).not.toMatch(/mongo|topology|client/i);
    expect(['INTERNAL_SERVER_ERROR', 'SERVICE_UNAVAILABLE']).toContain(response.body.errors[0].extensions.code);
    await broken.http.close();
  });
});
