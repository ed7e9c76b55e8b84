import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/config.ts';
import { dataOf, executeGraphQL, expectBadUserInput, firstError } from './support/graphql-client.ts';
import { useServerWithLostDatabase } from './support/lost-database.ts';
import { expectError } from './support/openapi-contract.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { AUTH, startServerWithLostDatabase, type TestServer, useTestServer } from './support/test-server.ts';

/** `count` aliases of one list field, each with these arguments. */
function aliases(count: number, field: string, args: string, selection = '{ id }'): string {
  return Array.from({ length: count }, (_, index) => `a${index}: ${field}(${args}) ${selection}`).join('\n');
}

function expectTooLarge(response: Awaited<ReturnType<typeof executeGraphQL>>, items: number, maxItems: number) {
  expect(response.body.data, 'refused before execution: no data at all').toBeUndefined();
  expect(response.body.errors).toHaveLength(1);
  expect(firstError(response).extensions).toMatchObject({ code: 'QUERY_TOO_LARGE', items, maxItems });
  expect(firstError(response).message).toContain(`at most ${maxItems}`);
}

describe(`with the default list-size limit (${DEFAULTS.MAX_GRAPHQL_LIST_ITEMS} pets per operation)`, () => {
  const server = useTestServer();
  const rest = restClient(server);

  beforeAll(async () => {
    await rest.addPet({ name: 'Counted', categoryId: 1 });
  });

  it('when a query asks for 15 aliases of pets(limit: 100), then it is refused with QUERY_TOO_LARGE', async () => {
    const response = await executeGraphQL(server, `{ ${aliases(15, 'pets', 'limit: 100')} }`);
    expectTooLarge(response, 1500, 500);
  });

  it('then the refusal is 400 for a client that accepts application/graphql-response+json', async () => {
    const response = await server.request
      .post('/graphql')
      .set({ ...AUTH, Accept: 'application/graphql-response+json' })
      .send({ query: `{ ${aliases(6, 'pets', 'limit: 100')} }` });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).errors[0].extensions.code).toBe('QUERY_TOO_LARGE');
  });

  it('when a query asks for exactly the limit (5 x 100), then it is served', async () => {
    const response = await executeGraphQL(server, `{ ${aliases(5, 'pets', 'limit: 100')} }`);
    expect(Object.keys(dataOf(response) as object)).toHaveLength(5);
  });

  it('counts petsConnection(first:) from variables, and the default of 20 when an argument is left out', async () => {
    const query = `query ($n: Int) { ${aliases(5, 'petsConnection', 'first: $n', '{ nodes { id } }')} more: pets { id } }`;
    expectTooLarge(await executeGraphQL(server, query, { n: 100 }), 520, 500);
    // Without $n each connection asks for its default, 20: 5 x 20 + 20.
    expect((await executeGraphQL(server, query, {})).body.errors).toBeUndefined();
  });

  it('counts fields inside fragments and inline fragments, each time they are spread', async () => {
    const query = `
      query { ...Big ...Big ... on Query { c: pets(limit: 100) { id } } other: petsConnection(first: 100) { edges { node { id } } } }
      fragment Big on Query { a: pets(limit: 100) { id } b: pets(limit: 100) { id } }`;
    expectTooLarge(await executeGraphQL(server, query), 600, 500);
  });

  it('judges the operation a request runs, each in its turn, in a document of several', async () => {
    const query = `query Small { pets(limit: 1) { id } }
      query Huge { ${aliases(6, 'pets', 'limit: 100')} }
      query ByVariable($n: Int) { ${aliases(6, 'pets', 'limit: $n')} }`;
    const run = async (operationName: string, variables: Record<string, unknown> = {}) => {
      const response = await server.request.post('/graphql').set(AUTH).send({ query, variables, operationName });
      return { status: response.status, headers: response.headers, body: response.body };
    };
    // Each twice: the second run of each operation finds its walk prepared by the first.
    for (let time = 0; time < 2; time++) {
      expect((await run('Small')).body.errors).toBeUndefined();
      expectTooLarge(await run('Huge'), 600, 500);
      expectTooLarge(await run('ByVariable', { n: 100 }), 600, 500);
      expect(Object.keys(dataOf(await run('ByVariable', { n: 80 })) as object)).toHaveLength(6);
    }
  });

  it('refuses before any resolver runs: a service whose database is gone still answers QUERY_TOO_LARGE alone', async () => {
    const broken: TestServer = await startServerWithLostDatabase();
    try {
      expectTooLarge(await executeGraphQL(broken, `{ ${aliases(15, 'pets', 'limit: 100')} }`), 1500, 500);
    } finally {
      await broken.close();
    }
  });
});

describe('with a list-size limit of 100', () => {
  const server = useTestServer({ maxGraphQLListItems: 100 });
  const rest = restClient(server);

  it('then the REST list route at its largest page (limit=100) never trips it', async () => {
    const response = await rest.listPets('?limit=100');
    expectStatus(response, 200);
  });

  it('then two GraphQL lists of 60 are refused', async () => {
    expectTooLarge(await executeGraphQL(server, `{ ${aliases(2, 'pets', 'limit: 60')} }`), 120, 100);
  });
});

describe('a limit out of range always says "between 1 and 100"', () => {
  const server = useTestServer();
  const rest = restClient(server);
  const broken = useServerWithLostDatabase();

  it.each(['0', '101', '-1', '99999999999', '-99999999999', '99999999999999999999'])(
    "REST: when a client lists with limit=%s, then 400 BAD_USER_INPUT naming limit, in the rule's words",
    async (limit) => {
      const response = await rest.listPets(`?limit=${limit}`);
      expectError(response, 400, 'BAD_USER_INPUT', 'limit');
      expect(response.body.message).toBe('Invalid value for "limit": must be between 1 and 100');
    },
  );

  it.each([
    ['pets(limit:)', 'pets(limit: 99999999999) { id }', 'limit'],
    ['petsConnection(first:)', 'petsConnection(first: -99999999999) { nodes { id } }', 'first'],
  ])("GraphQL: a literal beyond 32 bits in %s gets the rule, not graphql-js's Int text", async (_what, field, arg) => {
    const response = await executeGraphQL(server, `{ ${field} }`);
    expect(expectBadUserInput(response, arg).message).toBe(`Invalid value for "${arg}": must be between 1 and 100`);
  });

  it('GraphQL: a variable beyond 32 bits gets the rule too, naming the variable', async () => {
    const response = await executeGraphQL(server, 'query ($n: Int) { pets(limit: $n) { id } }', { n: 99999999999 });
    expect(expectBadUserInput(response, 'n').message).toBe('Invalid value for "n": must be between 1 and 100');
  });

  it('GraphQL: an out-of-range limit is refused before the database is asked', async () => {
    const response = await executeGraphQL(broken(), 'query ($n: Int) { pets(limit: $n) { id } }', { n: 2 ** 40 });
    expectBadUserInput(response, 'n');
  });
});
