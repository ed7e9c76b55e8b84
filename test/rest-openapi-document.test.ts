import { describe, expect, it } from 'vitest';
import { loadOpenApiDocument } from './support/openapi-contract.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const server = useTestServer();

describe('when a client asks for GET /v1/openapi.json', () => {
  it('then it gets the contract as JSON without authentication', async () => {
    const response = await server.request.get('/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body.openapi).toMatch(/^3\.1\.\d+$/);
    const operationIds = Object.values(response.body.paths as Record<string, Record<string, { operationId?: string }>>)
      .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
      .sort();
    expect(operationIds).toEqual(['createPet', 'getPet', 'listPets']);
  });

  it('then it gets exactly the committed schema/openapi.yaml', async () => {
    const response = await server.request.get('/v1/openapi.json').set(AUTH);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(loadOpenApiDocument());
  });
});
