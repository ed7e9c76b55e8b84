import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/openapi-contract.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { API_KEY, OTHER_API_KEY, useTestServer } from './support/test-server.ts';

const server = useTestServer();
const rest = restClient(server);
/** A pet that exists, so that getPet can answer 200 to an accepted key. */
let petId: number;

beforeAll(async () => {
  petId = (await rest.addPet({ name: 'Guarded', categoryId: 1 })).id;
});

type Headers = Record<string, string>;

/** The three operations of the contract, each sent with the given headers instead of the key. */
const operations = {
  listPets: (headers: Headers) => rest.listPets('', headers),
  createPet: (headers: Headers) => rest.createPet({ name: 'Keyed', categoryId: 1 }, headers),
  getPet: (headers: Headers) => rest.getPet(petId, headers),
} as const;
const SUCCESS = { listPets: 200, createPet: 201, getPet: 200 } as const;
const names = Object.keys(operations) as Array<keyof typeof operations>;

describe.each(names)('%s', (operation) => {
  it('when the Authorization header is missing, then 401 UNAUTHENTICATED with WWW-Authenticate: Bearer realm="petstore"', async () => {
    const response = await operations[operation]({});
    expectError(response, 401, 'UNAUTHENTICATED');
    expect(response.headers['www-authenticate']).toBe('Bearer realm="petstore"');
  });

  it.each([
    ['a wrong key', `Bearer ${API_KEY}x`],
    ['a key of another service', 'Bearer some-other-service-key-123456'],
    ['a Basic credential', `Basic ${Buffer.from(`user:${API_KEY}`).toString('base64')}`],
    ['the key without a scheme', API_KEY],
    ['the scheme without a key', 'Bearer'],
    ['the key followed by more text', `Bearer ${API_KEY} extra`],
  ])(
    'when the request carries %s, then 401 UNAUTHENTICATED with error="invalid_token"',
    async (_what, authorization) => {
      const response = await operations[operation]({ Authorization: authorization });
      expectError(response, 401, 'UNAUTHENTICATED');
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="petstore"/);
      expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
    },
  );

  it.each([
    ['Bearer <API_KEY>', `Bearer ${API_KEY}`],
    ['bearer <API_KEY> (lower-case scheme)', `bearer ${API_KEY}`],
    ['BEARER <API_KEY> (upper-case scheme)', `BEARER ${API_KEY}`],
    ['Bearer <OTHER_API_KEY> (the second configured key)', `Bearer ${OTHER_API_KEY}`],
  ])('when the request carries %s, then it succeeds', async (_what, authorization) => {
    const response = await operations[operation]({ Authorization: authorization });
    expectStatus(response, SUCCESS[operation]);
    expect(response.headers['www-authenticate']).toBeUndefined();
  });
});

describe('authentication comes before anything else', () => {
  it('when a bad body comes without a key, then 401 (not 400) and nothing is stored', async () => {
    const response = await rest.storesNothing(() => rest.createPet({ name: '', categoryId: 'x', id: 3 }, {}));
    expectError(response, 401, 'UNAUTHENTICATED');
  });

  it('when a valid body comes with a wrong key, then 401 and nothing is stored', async () => {
    const response = await rest.storesNothing(() =>
      operations.createPet({ Authorization: 'Bearer not-the-key-000000000000' }),
    );
    expectError(response, 401, 'UNAUTHENTICATED');
  });

  it('when a body that is not JSON comes without a key, then 401 (not 400 INVALID_JSON)', async () => {
    const response = await rest.createPetFromText('{"name":', 'application/json', {});
    expectError(response, 401, 'UNAUTHENTICATED');
  });

  it('when a text/plain body comes without a key, then 401 (not 415)', async () => {
    const response = await rest.createPetFromText('hello', 'text/plain', {});
    expectError(response, 401, 'UNAUTHENTICATED');
  });

  it('when an oversized body comes without a key, then 401 (not 413)', async () => {
    const response = await rest.createPet({ name: 'x'.repeat(20_000), categoryId: 1 }, {});
    expectError(response, 401, 'UNAUTHENTICATED');
  });

  it('when an invalid limit comes without a key, then 401 (not 400)', async () => {
    const response = await rest.listPets('?limit=0', {});
    expectError(response, 401, 'UNAUTHENTICATED');
  });

  it('when an invalid petId comes without a key, then 401 (not 400)', async () => {
    const response = await rest.getPet('abc', {});
    expectError(response, 401, 'UNAUTHENTICATED');
  });

  it('when an absent pet is asked for without a key, then 401 (not 404): no key learns which ids exist', async () => {
    const response = await rest.getPet(petId + 1000, {});
    expectError(response, 401, 'UNAUTHENTICATED');
  });

  it.each([
    ['GET', '/v1/nope'],
    ['GET', '/v1/pets/1/extra'],
    ['DELETE', '/v1/pets'],
    ['POST', '/v1/pets/1'],
  ] as const)(
    'when %s %s (no such route or method) comes without a key, then 401 (not 404/405)',
    async (method, path) => {
      const response = await rest.send(method, path, { headers: {} });
      expectError(response, 401, 'UNAUTHENTICATED');
      expect(response.headers['www-authenticate']).toBe('Bearer realm="petstore"');
      expect(response.headers.allow).toBeUndefined();
    },
  );

  it('serves GET /v1/openapi.json without a key, and ignores a wrong one there', async () => {
    for (const headers of [{}, { Authorization: 'Bearer wrong-key-000000000000' }]) {
      const response = await server.request.get('/v1/openapi.json').set(headers);
      expect(response.status).toBe(200);
      expect(response.body.openapi).toEqual(expect.any(String));
    }
  });
});
