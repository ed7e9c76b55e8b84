// The GraphQL documents the GraphQL targets run, one per operation; `graphql-by-id` sends their ids
// instead, published in the memory stores of our services (bench/memory-stores.ts).

import { documentIdOf } from '../src/documents/document-id.ts';
import type { Operation } from './scenarios.ts';

/** What every create sends (REST spells the status in lower case). */
export const NEW_PET = { name: 'Bench pet', categoryId: 3 };
const FIELDS = 'id name categoryId status';
export const DOCUMENTS: Record<Operation, { query: string; variables: (id: number) => object; field: string }> = {
  get: {
    query: `query Pet($id: ID!) { pet(id: $id) { ${FIELDS} } }`,
    variables: (id) => ({ id: String(id) }),
    field: 'pet',
  },
  list20: {
    query: `query Pets($limit: Int) { pets(limit: $limit) { ${FIELDS} } }`,
    variables: () => ({ limit: 20 }),
    field: 'pets',
  },
  list100: {
    query: `query Pets($limit: Int) { pets(limit: $limit) { ${FIELDS} } }`,
    variables: () => ({ limit: 100 }),
    field: 'pets',
  },
  create: {
    query: `mutation CreatePet($input: NewPet!) { createPet(input: $input) { ${FIELDS} } }`,
    variables: () => ({ input: { ...NEW_PET, status: 'AVAILABLE' } }),
    field: 'createPet',
  },
};

/** The documents above by id, as `npm run documents -- publish` would store them. */
export function publishedBenchDocuments(): Map<string, string> {
  return new Map(Object.values(DOCUMENTS).map(({ query }) => [documentIdOf(query), query]));
}
