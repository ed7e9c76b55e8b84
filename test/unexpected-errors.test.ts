import { describe, expect, it } from 'vitest';
import { buggyPets } from './support/buggy-pets.ts';
import { capturingLogger, ERROR_LEVEL, type LogLine, linesDuring } from './support/capturing-logger.ts';
import { executeGraphQL, firstError, type GraphQLResponse } from './support/graphql-client.ts';
import { expectError } from './support/openapi-contract.ts';
import { CreatePetDocument, PetDocument, PetsDocument } from './support/operations.ts';
import { restClient } from './support/rest-client.ts';
import type { ResponseOf } from './support/rest-types.ts';
import { useTestServer } from './support/test-server.ts';

/** What a real bug throws: a field read off something that is not there. */
const BUG = "Cannot read properties of undefined (reading 'name')";
/** A pet repository with a bug in every method. */
const BUGGY_PETS = buggyPets(BUG);

const { logger, lines } = capturingLogger();
const server = useTestServer({ logger, wrapStores: (stores) => ({ ...stores, pets: BUGGY_PETS }) });
const rest = restClient(server);

const loggedDuring = <T extends { headers: Record<string, string | undefined> }>(send: () => Promise<T>) =>
  linesDuring(lines, send);

/** The bug is logged once, as an error with its stack and request id; nothing else of the request is an error. */
function expectLoggedOnce(logged: LogLine[], requestId: string | undefined): void {
  const aboutTheBug = logged.filter((line) => JSON.stringify(line).includes(BUG));
  expect(aboutTheBug).toHaveLength(1);
  expect(aboutTheBug[0]).toMatchObject({
    level: ERROR_LEVEL,
    reqId: requestId,
    err: { type: 'TypeError', message: BUG, stack: expect.stringContaining(`TypeError: ${BUG}`) },
  });
  expect(logged.filter((line) => line.level >= ERROR_LEVEL)).toHaveLength(1);
}

/** Nothing of the bug reaches the client: not its text, not its type, not a stack. */
function expectNoInternals(body: string): void {
  expect(body).not.toContain(BUG);
  expect(body).not.toMatch(/TypeError|stack|originalError|at .*\.ts:\d+/);
}

/** A REST route's answer to a bug: 500 with nothing but "Unexpected error.", and the error logged once. */
async function expectMaskedOnRest(
  send: () => Promise<ResponseOf<'listPets'> | ResponseOf<'createPet'> | ResponseOf<'getPet'>>,
) {
  const { response, logged, requestId } = await loggedDuring(send);
  expectError(response, 500, 'INTERNAL_SERVER_ERROR');
  expect(response.body).toEqual({ code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.', status: 500 });
  expectNoInternals(response.text);
  expectLoggedOnce(logged, requestId);
}

describe('when a bug throws behind a REST route, then it answers 500 "Unexpected error." and the log gets the error once', () => {
  it('GET /v1/pets', () => expectMaskedOnRest(() => rest.listPets()));
  it('POST /v1/pets', () => expectMaskedOnRest(() => rest.createPet({ name: 'Rex', categoryId: 1 })));
  it('GET /v1/pets/{petId}', () => expectMaskedOnRest(() => rest.getPet(1)));
});

/** A GraphQL operation over each method of the repository. */
const OPERATIONS: Array<[string, () => Promise<GraphQLResponse<unknown>>]> = [
  ['pets', () => executeGraphQL(server, PetsDocument, {})],
  ['pet(id)', () => executeGraphQL(server, PetDocument, { id: '1' })],
  ['createPet', () => executeGraphQL(server, CreatePetDocument, { input: { name: 'Rex', categoryId: 1 } })],
];

describe('when a bug throws behind a GraphQL field', () => {
  it.each(OPERATIONS)(
    'then %s answers INTERNAL_SERVER_ERROR "Unexpected error." and the log gets the error once',
    async (_field, send) => {
      const { response, logged, requestId } = await loggedDuring(send);
      expect(response.body.errors).toHaveLength(1);
      const error = firstError(response);
      expect(error.message).toBe('Unexpected error.');
      expect(error.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
      expectNoInternals(JSON.stringify(response.body));
      expectLoggedOnce(logged, requestId);
    },
  );
});
