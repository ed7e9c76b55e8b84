import { describe, expect, it } from 'vitest';
import { createPetOverGraphQL, dataOf, executeGraphQL } from './support/graphql-client.ts';
import { PetDocument, PetsDocument } from './support/operations.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { useTestServer } from './support/test-server.ts';

const server = useTestServer();
const rest = restClient(server);

describe('REST and GraphQL views of the same pet', () => {
  it('when a pet is created over REST, then GraphQL pet(id) shows it with the id as a string and the enum name', async () => {
    const pet = await rest.addPet({ name: 'Both', categoryId: 11, status: 'available' });
    const response = await executeGraphQL(server, PetDocument, { id: String(pet.id) });
    expect(response.body.errors).toBeUndefined();
    expect(dataOf(response).pet).toEqual({ id: String(pet.id), name: 'Both', categoryId: 11, status: 'AVAILABLE' });
  });

  it('when a pet without status is created over REST, then GraphQL shows status null', async () => {
    const pet = await rest.addPet({ name: 'Bare', categoryId: 12 });
    const single = await executeGraphQL(server, PetDocument, { id: String(pet.id) });
    expect(dataOf(single).pet).toEqual({ id: String(pet.id), name: 'Bare', categoryId: 12, status: null });
    const list = await executeGraphQL(server, PetsDocument, { limit: 100 });
    expect(dataOf(list).pets).toContainEqual({ id: String(pet.id), name: 'Bare', categoryId: 12, status: null });
  });

  it.each([
    ['SOLD', 'sold'],
    ['PENDING', 'pending'],
    ['AVAILABLE', 'available'],
  ] as const)('when a pet is created over GraphQL with %s, then REST shows it with status %j', async (name, value) => {
    const pet = await createPetOverGraphQL(server, { name: `GraphQL ${name}`, categoryId: 13, status: name });
    const expected = { id: Number(pet.id), name: `GraphQL ${name}`, categoryId: 13, status: value };
    const fetched = await rest.getPet(pet.id);
    expectStatus(fetched, 200);
    expect(fetched.body).toEqual(expected);
    const listed = await rest.listPets(`?status=${value}&limit=100`);
    expectStatus(listed, 200);
    expect(listed.body).toContainEqual(expected);
  });

  it('when a pet without status is created over GraphQL, then REST omits the status field', async () => {
    const pet = await createPetOverGraphQL(server, { name: 'GraphQL bare', categoryId: 14 });
    expect(pet.status).toBeNull();
    const fetched = await rest.getPet(pet.id);
    expectStatus(fetched, 200);
    expect(fetched.body).toEqual({ id: Number(pet.id), name: 'GraphQL bare', categoryId: 14 });
  });

  it('lists the same pets in the same order over REST and over GraphQL', async () => {
    const listed = await rest.listPets('?limit=100');
    const graphql = await executeGraphQL(server, PetsDocument, { limit: 100 });
    expectStatus(listed, 200);
    expect(listed.body.length).toBeLessThan(100);
    const asRest = dataOf(graphql).pets.map((pet) => {
      const converted: Record<string, unknown> = { id: Number(pet.id), name: pet.name, categoryId: pet.categoryId };
      if (pet.status !== null) converted.status = pet.status.toLowerCase();
      return converted;
    });
    expect(listed.body).toEqual(asRest);
  });
});
