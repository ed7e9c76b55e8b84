import { describe, expect, it } from 'vitest';
import { MAX_ERRORS } from '../src/graphql/errors.ts';
import { executeGraphQL, firstError, invalidVariables } from './support/graphql-client.ts';
import { useServerWithLostDatabase } from './support/lost-database.ts';
import { CreatePetDocument, PetsDocument } from './support/operations.ts';
import { useTestServer } from './support/test-server.ts';

const server = useTestServer();
/**
 * Its database client closed under it: the repository turns the driver's errors into "database
 * unavailable". (A real bug, masked as INTERNAL_SERVER_ERROR, is unexpected-errors.test.ts's.)
 */
const broken = useServerWithLostDatabase();

describe('when the database is lost behind a query', () => {
  it('then the client gets 503 SERVICE_UNAVAILABLE without internals', async () => {
    const response = await executeGraphQL(broken(), PetsDocument, {});
    expect(response.status).toBe(503);
    expect(firstError(response).extensions?.code).toBe('SERVICE_UNAVAILABLE');
    expect(firstError(response).message).not.toMatch(/mongo|topology|client/i);
  });

  it('then the client never sees stack traces or original errors', async () => {
    const response = await executeGraphQL(broken(), PetsDocument, {});
    expect(JSON.stringify(response.body)).not.toMatch(/stack|originalError|at .*\.ts:/);
  });
});

describe('when a client sends a field the input does not have', () => {
  it('then the error names the key as it was sent, even when it looks like a path', async () => {
    const response = await executeGraphQL(
      server,
      CreatePetDocument,
      invalidVariables({ input: { name: 'x', categoryId: 1, 'z at "id"; pwned': 1 } }),
    );
    expect(firstError(response).extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.z at "id"; pwned',
      reason: 'is not a known field',
    });
  });
});

describe('when a client sends more unknown fields than an answer has room for', () => {
  it('then the missing fields the input type declares still come first, before the cap', async () => {
    const input = Object.fromEntries(Array.from({ length: 60 }, (_, index) => [`extra${index}`, index]));
    const response = await executeGraphQL(server, CreatePetDocument, invalidVariables({ input }));
    const errors = response.body.errors ?? [];
    expect(errors).toHaveLength(MAX_ERRORS + 1);
    expect(errors.slice(0, 3).map((error) => [error.extensions?.field, error.extensions?.reason])).toEqual([
      ['input.name', 'is required'],
      ['input.categoryId', 'is required'],
      ['input.extra0', 'is not a known field'],
    ]);
    expect(errors.at(-1)?.extensions?.code).toBe('TOO_MANY_ERRORS');
  });
});
