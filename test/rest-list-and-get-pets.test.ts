import { describe, expect, it } from 'vitest';
import { expectError } from './support/openapi-contract.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { startTestServer, useTestServer } from './support/test-server.ts';

const server = useTestServer();
const rest = restClient(server);

describe('when a client lists pets (GET /v1/pets)', () => {
  it('then it gets 200 with a bare JSON array of pets in ascending id order', async () => {
    await rest.addPet({ name: 'Listed', categoryId: 5, status: 'sold' });
    const response = await rest.listPets();
    expectStatus(response, 200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(Array.isArray(response.body)).toBe(true);
    expect(response.text.startsWith('[')).toBe(true);
    const ids = response.body.map((pet) => pet.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('then, filtered by status, only pets with that status come back', async () => {
    const sold = await rest.addPet({ name: 'Sold one', categoryId: 5, status: 'sold' });
    const response = await rest.listPets('?status=sold&limit=100');
    expectStatus(response, 200);
    expect(response.body.length).toBeGreaterThan(0);
    expect(response.body.every((pet) => pet.status === 'sold')).toBe(true);
    expect(response.body).toContainEqual(sold);
  });

  it('then, when the status filter matches nothing, the body is an empty array', async () => {
    const fresh = await startTestServer();
    try {
      const response = await restClient(fresh).listPets('?status=pending');
      expectStatus(response, 200);
      expect(response.body).toEqual([]);
      expect(response.headers.link).toBeUndefined();
    } finally {
      await fresh.close();
    }
  });
});

describe('when a client gets a pet by id (GET /v1/pets/{petId})', () => {
  it('then it gets 200 with the pet that has this id', async () => {
    const pet = await rest.addPet({ name: 'Lookup', categoryId: 9, status: 'pending' });
    const response = await rest.getPet(pet.id);
    expectStatus(response, 200);
    expect(response.body).toEqual(pet);
  });

  it('then a valid id that no pet has gets 404 PET_NOT_FOUND', async () => {
    const newest = await rest.addPet({ name: 'Newest', categoryId: 1 });
    const response = await rest.getPet(newest.id + 1000);
    expectError(response, 404, 'PET_NOT_FOUND');
  });

  it('then the largest valid id 2^53-1 gets 404 PET_NOT_FOUND', async () => {
    const response = await rest.getPet(Number.MAX_SAFE_INTEGER);
    expectError(response, 404, 'PET_NOT_FOUND');
  });
});
