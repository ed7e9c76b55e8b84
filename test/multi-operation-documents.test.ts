import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AUTH, useTestServer } from './support/test-server.ts';

const server = useTestServer();

/** Yoga's own path: the fast path leaves a body with extensions to Yoga, where graphql-jit runs as a plugin. */
const throughYoga = (query: string, operationName: string, variables: Record<string, unknown> = {}) =>
  server.request
    .post('/graphql')
    .set(AUTH)
    .set('Content-Type', 'application/json')
    .send({ query, operationName, variables, extensions: { probe: true } });

describe('a document of several operations, run by name through Yoga', () => {
  it('runs the operation each request names, not the one compiled first', async () => {
    const name = `multi-${randomUUID()}`;
    const document = `
      mutation Make($input: NewPet!) { createPet(input: $input) { id name } }
      query Look { pets(limit: 1) { id } }
    `;
    const made = await throughYoga(document, 'Make', { input: { name, categoryId: 1 } });
    expect(made.body.data.createPet.name).toBe(name);

    const looked = await throughYoga(document, 'Look');
    expect(looked.body.errors).toBeUndefined();
    expect(looked.body.data).toEqual({ pets: [expect.objectContaining({ id: expect.any(String) })] });
    expect(await server.database.db.collection('pets').countDocuments({ name })).toBe(1);
  });
});
