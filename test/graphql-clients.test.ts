import { Client, fetchExchange, gql } from '@urql/core';
import { GraphQLClient } from 'graphql-request';
import { describe, expect, it } from 'vitest';
import { API_KEY, useTestServer } from './support/test-server.ts';

const LIST = 'query ClientList($limit: Int) { pets(limit: $limit) { id name } }';
const CREATE = 'mutation ClientCreate($input: NewPet!) { createPet(input: $input) { id name } }';
const headers = { Authorization: `Bearer ${API_KEY}` };

/** Records each request's method, so a test shows which one the client used. */
function recordingFetch(methods: string[]): typeof fetch {
  return (input, init) => {
    methods.push(init?.method ?? 'GET');
    return fetch(input, init);
  };
}

type Pets = { pets: { id: string; name: string }[] };

describe('urql and graphql-request against the default configuration, as their docs set them up', () => {
  const server = useTestServer();
  const url = () => `${server.baseUrl}/graphql`;

  it.each([
    ['POST', false],
    ['GET', 'force'],
  ] as const)('urql (@urql/core, fetchExchange) creates by POST and lists by %s', async (method, preferGetMethod) => {
    const methods: string[] = [];
    const client = new Client({
      url: url(),
      exchanges: [fetchExchange],
      preferGetMethod,
      fetch: recordingFetch(methods),
      fetchOptions: { headers },
      requestPolicy: 'network-only',
    });
    const name = `Urql ${method}`;
    const created = await client.mutation(gql(CREATE), { input: { name, categoryId: 1 } }).toPromise();
    expect(created.error).toBeUndefined();
    expect(created.data?.createPet.name).toBe(name);
    const listed = await client.query<Pets>(gql(LIST), { limit: 100 }).toPromise();
    expect(listed.error).toBeUndefined();
    expect(listed.data?.pets.map((pet) => pet.name)).toContain(name);
    expect(methods).toEqual(['POST', method]);
  });

  it.each(['POST', 'GET'] as const)(
    'graphql-request lists by %s and reads an error as a ClientError',
    async (method) => {
      const methods: string[] = [];
      const client = new GraphQLClient(url(), { headers, method, fetch: recordingFetch(methods) });
      const { pets } = await client.request<Pets>(LIST, { limit: 1 });
      expect(pets.length).toBeLessThanOrEqual(1);
      const refused = await client.request(LIST, { limit: 'many' }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ response: { errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] } });
      expect(methods).toEqual([method, method]);
    },
  );

  it('graphql-request creates by POST', async () => {
    const client = new GraphQLClient(url(), { headers });
    const { createPet } = await client.request<{ createPet: { name: string } }>(CREATE, {
      input: { name: 'Requested', categoryId: 2 },
    });
    expect(createPet.name).toBe('Requested');
  });
});
