import { beforeAll, describe, expect, it } from 'vitest';
import { createPetRepository } from '../src/stores.ts';
import type { PetsPageQuery } from './support/__generated__/graphql.ts';
import { dataOf, executeGraphQL, firstError } from './support/graphql-client.ts';
import { PetDocument, PetsDocument, PetsPageDocument } from './support/operations.ts';
import { expectStatus, type RestPet, restClient } from './support/rest-client.ts';
import { useTestServer } from './support/test-server.ts';

const server = useTestServer();
const rest = restClient(server);

/** The readable pets, in id order, and the stored documents that are not pets, by id. */
let readable: number[];
let nameMissing: number;
let negativeCategory: number;
let unknownStatus: number;
/** Every unreadable document's `_id` as the repository reports it. */
let unreadableIds: string[];

beforeAll(async () => {
  const created: RestPet[] = [];
  for (let index = 1; index <= 6; index++) created.push(await rest.addPet({ name: `Pet ${index}`, categoryId: 1 }));
  const ids = created.map((pet) => pet.id) as [number, number, number, number, number, number];
  const [first, second, third, fourth, fifth, sixth] = ids;
  const pets = server.database.db.collection<{ _id: number | string; [field: string]: unknown }>('pets');
  // Written the way an older version or a hand-edit might have: in the middle of the pages.
  await pets.replaceOne({ _id: second }, { categoryId: 1 });
  await pets.replaceOne({ _id: third }, { name: 'Minus', categoryId: -5 });
  await pets.replaceOne({ _id: fifth }, { name: 'Lost', categoryId: 1, status: 'lost' });
  await pets.insertMany([
    { _id: fourth + 0.5, name: 'Half', categoryId: 1 },
    { _id: -1, name: 'Negative', categoryId: 1 },
    { _id: 'abc', name: 'Text id', categoryId: 1 },
    // The id the counter hands out next: the following create collides and must move past it.
    { _id: sixth + 1, name: ['not', 'text'], categoryId: 1 },
  ]);
  const seventh = await rest.addPet({ name: 'Pet 7', categoryId: 2 });
  expect(seventh.id).toBeGreaterThan(sixth + 1);
  readable = [first, fourth, sixth, seventh.id];
  nameMissing = second;
  negativeCategory = third;
  unknownStatus = fifth;
  unreadableIds = [
    String(second),
    String(third),
    String(fifth),
    String(fourth + 0.5),
    '-1',
    '"abc"',
    String(sixth + 1),
  ];
});

describe('when stored documents do not fit the pet shape', () => {
  it('then REST list pages leave them out and the readable pets stay reachable', async () => {
    const response = await rest.listPets('?limit=100');
    expectStatus(response, 200);
    expect(response.body.map((pet) => pet.id)).toEqual(readable);
  });

  it.each([1, 2, 3, 4])(
    'then REST pages of %i still advance past them, and the last page has no next link',
    async (limit) => {
      const { pages } = await rest.walk(`${server.restBasePath}/pets?limit=${limit}`);
      expect(pages.flat()).toEqual(readable);
      // Every page is full but the last, which is not empty: the lookahead counted readable pets only.
      for (const page of pages.slice(0, -1)) expect(page).toHaveLength(limit);
      expect(pages.at(-1)?.length).toBeGreaterThan(0);
    },
  );

  it('then GraphQL lists leave them out and its cursors advance past them', async () => {
    const listed = dataOf(await executeGraphQL(server, PetsDocument, { limit: 100 }));
    expect(listed.pets.map((pet) => Number(pet.id))).toEqual(readable);

    const walked: number[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const { petsConnection }: PetsPageQuery = dataOf(
        await executeGraphQL(server, PetsPageDocument, { first: 1, after }),
      );
      walked.push(...petsConnection.edges.map((edge) => Number(edge.node.id)));
      if (!petsConnection.pageInfo.hasNextPage) break;
      after = petsConnection.pageInfo.endCursor ?? null;
    }
    expect(walked).toEqual(readable);
  });

  it('then GET /v1/pets/{id} on one answers 500 INTERNAL_SERVER_ERROR naming only that pet', async () => {
    for (const petId of [nameMissing, negativeCategory, unknownStatus]) {
      // Through the contract-checking client: the document lists this 500 for getPet.
      const response = await rest.getPet(petId);
      expect(response.status).toBe(500);
      expect(response.body).toEqual({
        code: 'INTERNAL_SERVER_ERROR',
        message: `Pet ${petId} is stored in a form this service cannot read`,
        status: 500,
      });
    }
    for (const petId of readable) expect((await rest.getPet(petId)).status).toBe(200);
  });

  it('then GraphQL pet(id) on one is an INTERNAL_SERVER_ERROR for that pet only', async () => {
    const response = await executeGraphQL(server, PetDocument, { id: String(nameMissing) });
    expect(response.body.data?.pet ?? null).toBeNull();
    expect(firstError(response)).toMatchObject({
      message: `Pet ${nameMissing} is stored in a form this service cannot read`,
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    const readableOne = dataOf(await executeGraphQL(server, PetDocument, { id: String(readable[0]) }));
    expect(readableOne.pet?.id).toBe(String(readable[0]));
  });

  it('then the repository reports each one once, with what is wrong, and counts them', async () => {
    const reports: { id: string; problem: string }[] = [];
    const pets = createPetRepository(server.database, {
      onCorruptDocument: (id, problem) => reports.push({ id, problem }),
    });
    for (let round = 0; round < 2; round++) {
      await pets.listPage({ limit: 100 });
      await pets.listPage({ limit: 1, afterId: readable[0] });
      await expect(pets.findById(nameMissing)).rejects.toThrow(/cannot read/);
    }
    expect(reports.map((report) => report.id).sort()).toEqual([...unreadableIds].sort());
    expect(reports.find((report) => report.id === String(nameMissing))?.problem).toMatch(/name/);
    expect(reports.find((report) => report.id === String(unknownStatus))?.problem).toMatch(/status/);
    expect(pets.corruptDocumentsSeen()).toBe(unreadableIds.length);
  });
});
