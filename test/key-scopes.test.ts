import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_KEYS_COLLECTION, createApiKeyStore, sha256Hex } from '../src/auth/api-key-store.ts';
import type { Scope } from '../src/auth/scopes.ts';
import { executeGraphQL } from './support/graphql-client.ts';
import { sampleIn } from './support/metric-sample.ts';
import { expectError } from './support/openapi-contract.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const server = useTestServer();
const rest = restClient(server);
const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const CREATE = 'mutation ScopedCreate($input: NewPet!) { createPet(input: $input) { id name } }';
const LIST = 'query ScopedList { pets(limit: 2) { id name } }';

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const storedNamed = (name: string) => server.database.db.collection('pets').countDocuments({ name });
const fastPathCount = async () => sampleIn(await server.metrics.scrape.text(), 'graphql_fast_path_requests_total');

/** Keys by what they may do, issued as `npm run keys -- create --scope ...` issues them. */
const keys: Record<'read' | 'write' | 'metrics' | 'legacy', Record<string, string>> = {
  read: {},
  write: {},
  metrics: {},
  legacy: {},
};

async function issue(name: string, scopes: Scope[]): Promise<Record<string, string>> {
  const { key } = await createApiKeyStore(server.database.db).issue({ name, scopes });
  return bearer(key);
}

beforeAll(async () => {
  keys.read = await issue('reader', ['pets:read']);
  keys.write = await issue('writer', ['pets:write']);
  keys.metrics = await issue('scraper', ['metrics:read']);
  // A key issued before scopes existed: no scopes field at all.
  const legacyKey = `psk_legacy_${'x'.repeat(40)}`;
  await server.database.db.collection(API_KEYS_COLLECTION).insertOne({
    _id: 'key_000000000000legacy' as never,
    name: 'legacy',
    digest: sha256Hex(legacyKey),
    createdAt: new Date(),
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
  });
  keys.legacy = bearer(legacyKey);
  // The service reads issued keys every 2 s: wait until it knows all four (a 404, not a 401).
  const known = async () => {
    const statuses = await Promise.all(Object.values(keys).map((auth) => server.request.get('/v1/nowhere').set(auth)));
    return statuses.every((response) => response.status === 404);
  };
  const deadline = Date.now() + 5_000;
  while (!(await known())) {
    if (Date.now() > deadline) throw new Error('the issued keys did not reach the service within 5 s');
    await sleep(100);
  }
});

function expectForbidden(response: { status: number; body: unknown }, scope: Scope): void {
  expect(response.status).toBe(403);
  const { errors } = response.body as { errors: { message: string; extensions: Record<string, unknown> }[] };
  expect(errors).toHaveLength(1);
  expect(errors[0]?.extensions).toEqual({ code: 'FORBIDDEN', scope });
  expect(errors[0]?.message).toContain(scope);
}

describe('a pets:read key', () => {
  it('gets 200 on lists, gets and GraphQL queries', async () => {
    expectStatus(await rest.listPets('?limit=1', keys.read), 200);
    const created = await rest.createPet({ name: 'Seen', categoryId: 1 });
    expectStatus(created, 201);
    expectStatus(await rest.getPet(String(created.body.id), keys.read), 200);
    const query = await executeGraphQL(server, LIST, {}, keys.read);
    expect(query.status).toBe(200);
    expect(query.body.errors).toBeUndefined();
  });

  it('gets 403 FORBIDDEN on POST /v1/pets, in the contract Error body, and nothing is stored', async () => {
    const refused = await rest.createPet({ name: 'Refused REST', categoryId: 1 }, keys.read);
    expectError(refused, 403, 'FORBIDDEN');
    expect(refused.body.message).toContain('pets:write');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(await storedNamed('Refused REST')).toBe(0);
  });

  it('gets 403 FORBIDDEN on createPet, with either media type, through Yoga and the fast path, and nothing is stored', async () => {
    const variables = { input: { name: 'Refused GraphQL', categoryId: 1 } };
    // Yoga answers a document it has not seen; then the fast path has it.
    const first = await executeGraphQL(server, CREATE, variables, keys.read);
    expectForbidden(first, 'pets:write');
    const before = await fastPathCount();
    for (const accept of ['application/json', GRAPHQL_RESPONSE]) {
      const response = await server.request
        .post('/graphql')
        .set({ ...keys.read, Accept: accept })
        .send({ query: CREATE, variables });
      expectForbidden(response, 'pets:write');
    }
    expect((await fastPathCount()) - before).toBe(2);
    expect(await storedNamed('Refused GraphQL')).toBe(0);
    // The same document from a key that may write runs.
    const allowed = await executeGraphQL(server, CREATE, { input: { name: 'Allowed', categoryId: 1 } }, keys.write);
    expect(allowed.status).toBe(200);
    expect(await storedNamed('Allowed')).toBe(1);
  });

  it('gets 403 on /metrics (GET and HEAD) but 405 for a method no key may use', async () => {
    expectError(await server.request.get('/metrics').set(keys.read), 403, 'FORBIDDEN');
    expect((await server.request.head('/metrics').set(keys.read)).status).toBe(403);
    expectError(await server.request.delete('/v1/pets').set(keys.read), 405, 'METHOD_NOT_ALLOWED');
  });

  it('gets 403 for a document that mixes a mutation with introspection', async () => {
    const response = await executeGraphQL(
      server,
      'mutation { __typename createPet(input: { name: "Mixed", categoryId: 1 }) { id } }',
      {},
      keys.read,
    );
    expectForbidden(response, 'pets:write');
    expect(await storedNamed('Mixed')).toBe(0);
  });
});

describe('a pets:write key', () => {
  it('creates pets, and gets 403 on lists, gets and queries', async () => {
    const created = await rest.createPet({ name: 'Written', categoryId: 2 }, keys.write);
    expectStatus(created, 201);
    expectError(await rest.listPets('?limit=1', keys.write), 403, 'FORBIDDEN');
    expectError(await rest.getPet(String(created.body.id), keys.write), 403, 'FORBIDDEN');
    expectForbidden(await executeGraphQL(server, LIST, {}, keys.write), 'pets:read');
    // A GET of a query too.
    const byGet = await server.request.get(`/graphql?query=${encodeURIComponent(LIST)}`).set(keys.write);
    expectForbidden(byGet, 'pets:read');
  });
});

describe('a metrics:read key', () => {
  it('reads /metrics and nothing else', async () => {
    const metrics = await server.request.get('/metrics').set(keys.metrics);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('http_request_duration_seconds');
    expectError(await rest.listPets('?limit=1', keys.metrics), 403, 'FORBIDDEN');
    expectForbidden(await executeGraphQL(server, LIST, {}, keys.metrics), 'pets:read');
  });
});

describe('introspection alone (GraphiQL loading the schema)', () => {
  it('is open to any valid key, whatever its scopes', async () => {
    for (const auth of [keys.read, keys.write, keys.metrics]) {
      const schema = await executeGraphQL(server, '{ __schema { queryType { name } } __typename }', {}, auth);
      expect(schema.status).toBe(200);
      expect(schema.body.data).toEqual({ __schema: { queryType: { name: 'Query' } }, __typename: 'Query' });
    }
  });
});

describe('keys that carry every scope', () => {
  it('an issued key older than scopes keeps working as it did: it creates pets and reads /metrics', async () => {
    expectStatus(await rest.createPet({ name: 'Legacy', categoryId: 1 }, keys.legacy), 201);
    expectStatus(await rest.listPets('?limit=1', keys.legacy), 200);
    expect((await server.request.get('/metrics').set(keys.legacy)).status).toBe(200);
  });

  it('an API_KEYS key does everything', async () => {
    expectStatus(await rest.createPet({ name: 'Configured', categoryId: 1 }, AUTH), 201);
    expect((await server.request.get('/metrics').set(AUTH)).status).toBe(200);
    const mutation = await executeGraphQL(server, CREATE, { input: { name: 'Configured', categoryId: 1 } });
    expect(mutation.status).toBe(200);
  });
});
