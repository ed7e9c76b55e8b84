import { describe, expect, it } from 'vitest';
import { createPetOverGraphQL, dataOf, executeGraphQL, expectBadUserInput } from './support/graphql-client.ts';
import { PetDocument, QueryFieldsDocument } from './support/operations.ts';
import { useTestServer } from './support/test-server.ts';

const server = useTestServer();

describe('when a client asks for pet(id) (deprecated)', () => {
  it('then it gets the pet with that id', async () => {
    const pet = await createPetOverGraphQL(server, { name: 'Lookup', categoryId: 3, status: 'PENDING' });
    const response = await executeGraphQL(server, PetDocument, { id: pet.id });
    expect(dataOf(response).pet).toEqual(pet);
  });

  it('then it gets null, not an error, when there is no such pet', async () => {
    const response = await executeGraphQL(server, PetDocument, { id: '987654321' });
    expect(response.body).toEqual({ data: { pet: null } });
  });

  it.each(['abc', '-1', '0', '1.5', '9007199254740992', ''])('then the id %j gets BAD_USER_INPUT', async (id) => {
    expectBadUserInput(await executeGraphQL(server, PetDocument, { id }), 'id');
  });

  it('then introspection marks the field deprecated with the removal date', async () => {
    const response = await executeGraphQL(server, QueryFieldsDocument, {});
    const field = dataOf(response).__type?.fields?.find((candidate) => candidate.name === 'pet');
    expect(field?.isDeprecated).toBe(true);
    expect(field?.deprecationReason).toContain('5 December 2030');
  });
});
