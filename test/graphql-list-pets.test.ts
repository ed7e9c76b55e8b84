import { beforeAll, describe, expect, it } from 'vitest';
import type { PetsPageQuery } from './support/__generated__/graphql.ts';
import {
  createPetOverGraphQL,
  dataOf,
  executeGraphQL,
  expectBadUserInput,
  type GraphQLResponse,
} from './support/graphql-client.ts';
import { PetsDocument, PetsPageDocument } from './support/operations.ts';
import { useTestServer } from './support/test-server.ts';

const server = useTestServer();
let ids: string[];

beforeAll(async () => {
  ids = [];
  for (const [index, status] of (['AVAILABLE', 'SOLD', 'AVAILABLE', 'PENDING', 'AVAILABLE'] as const).entries()) {
    ids.push((await createPetOverGraphQL(server, { name: `Page ${index}`, categoryId: 2, status })).id);
  }
});

describe('when a client lists pets with pets', () => {
  it('then they come in ascending id order, 20 by default', async () => {
    const response = await executeGraphQL(server, PetsDocument, {});
    const listed = dataOf(response).pets.map((pet) => Number(pet.id));
    expect(listed.length).toBeLessThanOrEqual(20);
    expect(listed).toEqual([...listed].sort((a, b) => a - b));
  });

  it('then a status filters them', async () => {
    const { pets } = dataOf(await executeGraphQL(server, PetsDocument, { status: 'SOLD', limit: 100 }));
    expect(pets.length).toBeGreaterThan(0);
    expect(pets.every((pet) => pet.status === 'SOLD')).toBe(true);
  });

  it('then `pets(after:)` continues from a connection cursor', async () => {
    const first = dataOf(await executeGraphQL(server, PetsPageDocument, { first: 1 })).petsConnection;
    const next = await executeGraphQL(server, PetsDocument, { after: first.pageInfo.endCursor, limit: 1 });
    const firstId = Number(first.edges[0]?.node.id);
    expect(Number(dataOf(next).pets[0]?.id)).toBeGreaterThan(firstId);
  });

  it.each([0, 101, -1])('then limit %i gets BAD_USER_INPUT', async (limit) => {
    expectBadUserInput(await executeGraphQL(server, PetsDocument, { limit }), 'limit');
  });

  it.each(['nonsense', '', 'cGV0OjA', 'cGV0OjE='])('then the cursor %j gets BAD_USER_INPUT', async (after) => {
    expectBadUserInput(await executeGraphQL(server, PetsDocument, { after }), 'after');
  });
});

describe('when a client pages with petsConnection', () => {
  it('then the opaque cursor leads through every matching pet, without repeats', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const page: GraphQLResponse<PetsPageQuery> = await executeGraphQL(server, PetsPageDocument, {
        first: 2,
        after,
        status: 'AVAILABLE',
      });
      const { edges, pageInfo } = dataOf(page).petsConnection;
      seen.push(...edges.map((edge) => edge.node.id));
      pages += 1;
      expect(pageInfo.hasPreviousPage).toBe(false);
      if (!pageInfo.hasNextPage) break;
      expect(edges.at(-1)?.cursor).toBe(pageInfo.endCursor);
      after = pageInfo.endCursor;
    }
    const expected = [ids[0], ids[2], ids[4]];
    expect(seen.filter((id) => expected.includes(id))).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBeGreaterThan(1);
  });

  it('then past the end there is no next page and the endCursor is null', async () => {
    const last = dataOf(await executeGraphQL(server, PetsPageDocument, { first: 100 }));
    const after = last.petsConnection.pageInfo.endCursor;
    const beyond = await executeGraphQL(server, PetsPageDocument, { first: 5, after });
    expect(dataOf(beyond).petsConnection).toEqual({
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, endCursor: null },
    });
  });

  it.each([0, 101])('then first %i gets BAD_USER_INPUT', async (first) => {
    expectBadUserInput(await executeGraphQL(server, PetsPageDocument, { first }), 'first');
  });
});
