import { describe, expect, it } from 'vitest';
import { documentedOperation, loadOpenApiDocument } from './support/openapi-contract.ts';
import { OPERATIONS } from './support/rest-types.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const server = useTestServer();

type Node = Record<string, unknown>;

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

describe('the committed contract', () => {
  const document = loadOpenApiDocument();
  const deref = (node: unknown): Node => {
    const ref = (node as Node).$ref;
    if (typeof ref !== 'string') return node as Node;
    return deref(
      ref
        .slice(2)
        .split('/')
        .reduce<unknown>((at, segment) => (at as Node)[segment], document),
    );
  };

  it("gives Swagger UI's Try it out no example to fill in and send: parameter examples live in their schema's `examples`", () => {
    // Swagger UI fills a parameter in from its `example(s)`, its content's `example` or its schema's `example`.
    for (const item of Object.values(document.paths as Record<string, Record<string, Node>>)) {
      for (const operation of Object.values(item)) {
        for (const parameter of ((operation.parameters as unknown[]) ?? []).map(deref)) {
          expect(Object.keys(parameter), String(parameter.name)).not.toContain('example');
          expect(Object.keys(parameter), String(parameter.name)).not.toContain('examples');
          expect(Object.keys(parameter), String(parameter.name)).not.toContain('content');
          expect(Object.keys(deref(parameter.schema)), String(parameter.name)).not.toContain('example');
        }
      }
    }
  });

  it.each(Object.keys(OPERATIONS))(
    'documents on every answer of %s that X-Content-Type-Options and Cache-Control are always sent',
    (operationId) => {
      for (const [status, { headers }] of Object.entries(documentedOperation(operationId).responses)) {
        expect(headers, status).toEqual(expect.arrayContaining(['x-content-type-options', 'cache-control']));
      }
    },
  );

  it('gives those headers their one value', () => {
    const components = (document.components as { headers: Record<string, Node> }).headers;
    expect(components.XContentTypeOptions?.schema).toEqual({ type: 'string', const: 'nosniff' });
    expect(components.CacheControlNoStore?.schema).toEqual({ type: 'string', const: 'no-store' });
  });
});
