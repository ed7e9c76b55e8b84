import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeGraphQL, firstError, invalidVariables } from './support/graphql-client.ts';
import { CreatePetDocument, PetsDocument } from './support/operations.ts';
import { startServerWithLostDatabase, type TestServer, useTestServer } from './support/test-server.ts';

const server = useTestServer();
/** Its database client closed under it: the repository throws driver errors nobody planned for. */
let broken: TestServer;

beforeAll(async () => {
  broken = await startServerWithLostDatabase();
});
afterAll(async () => broken?.close());

describe('when something unexpected fails behind a query', () => {
  it('then the client gets INTERNAL_SERVER_ERROR without internals', async () => {
    const response = await executeGraphQL(broken, PetsDocument, {});
    expect(firstError(response).message).not.toMatch(/mongo|topology|client/i);
    expect(['INTERNAL_SERVER_ERROR', 'SERVICE_UNAVAILABLE']).toContain(firstError(response).extensions?.code);
  });

  it('then the client never sees stack traces or original errors', async () => {
    const response = await executeGraphQL(broken, PetsDocument, {});
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
