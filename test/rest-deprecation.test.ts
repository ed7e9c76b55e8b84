import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, loadOpenApiDocument } from './support/openapi-contract.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { useTestServer } from './support/test-server.ts';

/** The removal date the spec announces: 5 December 2030. */
const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';

const server = useTestServer();
const rest = restClient(server);
let petId: number;

beforeAll(async () => {
  petId = (await rest.addPet({ name: 'Old', categoryId: 1 })).id;
});

/** The targets of a Link header value that carry the given rel (RFC 8288, in the quoted form the service writes). */
function linkTargets(link: string | undefined, rel: string): string[] {
  return String(link ?? '')
    .split(/,\s*(?=<)/)
    .flatMap((part) => {
      const match = /^<([^>]*)>(.*)$/.exec(part.trim());
      const rels = /;\s*rel="([^"]*)"/.exec(match?.[2] ?? '')?.[1]?.split(/\s+/) ?? [];
      return match && rels.includes(rel) ? [match[1]!] : [];
    });
}

function expectDeprecationHeaders(headers: Record<string, string>) {
  expect(headers.deprecation).toMatch(/^@\d+$/);
  const deprecatedAt = Number(headers.deprecation!.slice(1)) * 1000;
  expect(headers.sunset).toBe(SUNSET);
  expect(deprecatedAt).toBeLessThanOrEqual(Date.parse(headers.sunset!));
  expect(headers.link).toContain('</v1/pets>; rel="successor-version"');
  expect(linkTargets(headers.link, 'successor-version')).toEqual(['/v1/pets']);
}

describe('GET /v1/pets/{petId} (deprecated)', () => {
  it('when the pet exists, then 200 with Deprecation, Sunset and a successor-version Link', async () => {
    const response = await rest.getPet(petId);
    expectStatus(response, 200);
    expectDeprecationHeaders(response.headers);
  });

  it('when the pet does not exist, then 404 with the same deprecation headers', async () => {
    const response = await rest.getPet(petId + 1000);
    expectError(response, 404, 'PET_NOT_FOUND');
    expectDeprecationHeaders(response.headers);
  });

  it('when the petId is invalid, then 400 also carries the deprecation headers', async () => {
    const response = await rest.getPet('abc');
    expectError(response, 400, 'BAD_USER_INPUT', 'petId');
    expectDeprecationHeaders(response.headers);
  });

  it('when the key is missing, then 401 also carries the deprecation headers', async () => {
    const response = await rest.getPet(petId, {});
    expectError(response, 401, 'UNAUTHENTICATED');
    expectDeprecationHeaders(response.headers);
  });

  it('links the deprecation notice (rel="deprecation") to a document that marks getPet deprecated', async () => {
    const response = await rest.getPet(petId);
    const [notice] = linkTargets(response.headers.link, 'deprecation');
    expect(notice).toBeDefined();
    const document = await server.request.get(notice!);
    expect(document.status).toBe(200);
    expect(document.body.paths['/pets/{petId}'].get).toMatchObject({ operationId: 'getPet', deprecated: true });
  });

  it('is the only operation the document marks deprecated', () => {
    const paths = loadOpenApiDocument().paths as Record<
      string,
      Record<string, { operationId: string; deprecated?: boolean }>
    >;
    const deprecated = Object.values(paths).flatMap((item) =>
      Object.values(item)
        .filter((op) => op.deprecated)
        .map((op) => op.operationId),
    );
    expect(deprecated).toEqual(['getPet']);
  });
});

describe('the successor and other operations', () => {
  it('GET /v1/pets carries no Deprecation, no Sunset and no successor-version Link', async () => {
    const response = await rest.listPets('?limit=100');
    expectStatus(response, 200);
    expect(response.headers.deprecation).toBeUndefined();
    expect(response.headers.sunset).toBeUndefined();
    expect(response.headers.link).toBeUndefined();
  });

  it('GET /v1/pets with a next page carries only rel="next" in Link', async () => {
    await rest.addPet({ name: 'New', categoryId: 1 });
    const response = await rest.listPets('?limit=1');
    expectStatus(response, 200);
    expect(response.headers.deprecation).toBeUndefined();
    expect(response.headers.sunset).toBeUndefined();
    expect(response.headers.link).not.toContain('successor-version');
    expect(response.headers.link).toMatch(/; rel="next"$/);
  });

  it('POST /v1/pets carries no deprecation headers', async () => {
    const response = await rest.createPet({ name: 'Fresh', categoryId: 1 });
    expectStatus(response, 201);
    expect(response.headers.deprecation).toBeUndefined();
    expect(response.headers.sunset).toBeUndefined();
    expect(response.headers.link).toBeUndefined();
  });
});
