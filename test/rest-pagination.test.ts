import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/openapi-contract.ts';
import { expectStatus, nextLink, restClient } from './support/rest-client.ts';
import { PET_STATUSES, type Pet, type PetStatus } from './support/rest-types.ts';
import { useTestServer } from './support/test-server.ts';

/** 24 pets: statuses cycle available, pending, sold, none, so each group has 6 (2 and 3 divide it). */
const TOTAL = 24;
const CYCLE = [...PET_STATUSES, undefined] as const;

const server = useTestServer();
const rest = restClient(server);
let pets: Pet[];

beforeAll(async () => {
  pets = [];
  for (let index = 0; index < TOTAL; index++) {
    const status = CYCLE[index % CYCLE.length];
    pets.push(await rest.addPet({ name: `Pet ${index}`, categoryId: 1 + (index % 3), ...(status ? { status } : {}) }));
  }
});

/** Follows rel="next" to the last page, failing if the links loop. */
const walk = (first: string) => rest.walk(first, TOTAL + 2);
const idsWith = (status: PetStatus | undefined) => pets.filter((pet) => pet.status === status).map((pet) => pet.id);
const allIds = () => pets.map((pet) => pet.id);

describe('limit', () => {
  it('when limit is omitted, then 20 pets come back (the default) and a next link without limit', async () => {
    const response = await rest.listPets();
    expectStatus(response, 200);
    expect(response.body).toHaveLength(20);
    expect(response.body.map((pet) => pet.id)).toEqual(allIds().slice(0, 20));
    const next = new URL(nextLink(response.headers.link)!, server.baseUrl);
    expect(next.pathname).toBe('/v1/pets');
    expect(next.searchParams.has('limit')).toBe(false);
    expect(next.searchParams.get('cursor')).toEqual(expect.any(String));
  });

  it('when following the default page, then the remaining 4 come back and no Link', async () => {
    const first = await rest.listPets();
    const remaining = await rest.followNext(nextLink(first.headers.link)!);
    expectStatus(remaining, 200);
    expect(remaining.body.map((pet) => pet.id)).toEqual(allIds().slice(20));
    expect(remaining.headers.link).toBeUndefined();
  });

  it('when limit=100, then every pet (at most 100) comes back on one page without Link', async () => {
    const response = await rest.listPets('?limit=100');
    expectStatus(response, 200);
    expect(response.body.length).toBeLessThanOrEqual(100);
    expect(response.body).toEqual(pets);
    expect(response.headers.link).toBeUndefined();
  });

  it('when limit=101, then 400 naming limit', async () => {
    const response = await rest.listPets('?limit=101');
    expectError(response, 400, 'BAD_USER_INPUT', 'limit');
  });

  it('when limit=1, then exactly one pet, the first', async () => {
    const response = await rest.listPets('?limit=1');
    expectStatus(response, 200);
    expect(response.body).toEqual([pets[0]]);
  });
});

describe('the Link rel="next" header', () => {
  it('when a full page of limit=2 has more after it, then Link is </v1/pets?limit=2&cursor=...>; rel="next"', async () => {
    const response = await rest.listPets('?limit=2');
    expectStatus(response, 200);
    expect(response.body).toHaveLength(2);
    expect(response.headers.link).toMatch(/^<\/v1\/pets\?limit=2&cursor=[^&>]+>; rel="next"$/);
  });

  it('keeps status in the next link when it was given', async () => {
    const response = await rest.listPets('?limit=2&status=sold');
    expectStatus(response, 200);
    const next = new URL(nextLink(response.headers.link)!, server.baseUrl);
    expect(next.pathname).toBe('/v1/pets');
    expect(next.searchParams.get('limit')).toBe('2');
    expect(next.searchParams.get('status')).toBe('sold');
    expect(next.searchParams.getAll('cursor')).toHaveLength(1);
  });

  it('when following Link from limit=2, then every pet is visited exactly once in ascending id order', async () => {
    const { pages, links } = await walk('/v1/pets?limit=2');
    expect(pages.flat()).toEqual(allIds());
    expect([...allIds()].sort((a, b) => a - b)).toEqual(allIds());
    expect(pages.every((page) => page.length === 2)).toBe(true);
    expect(new Set(links).size).toBe(links.length);
  });

  it('when the last page is exactly full (24 pets, limit=3), then it has no Link and no empty page follows', async () => {
    const { pages } = await walk('/v1/pets?limit=3');
    expect(pages).toHaveLength(TOTAL / 3);
    expect(pages.at(-1)).toHaveLength(3);
    expect(pages.flat()).toEqual(allIds());
  });

  it('when the last page is partly full (24 pets, limit=5), then it has no Link', async () => {
    const { pages } = await walk('/v1/pets?limit=5');
    expect(pages.map((page) => page.length)).toEqual([5, 5, 5, 5, 4]);
    expect(pages.flat()).toEqual(allIds());
  });

  it.each(PET_STATUSES)(
    'when following Link with status=%s, then exactly the pets with that status come, in order, and the full last page has no Link',
    async (status) => {
      const { pages, links } = await walk(`/v1/pets?limit=2&status=${status}`);
      expect(pages.flat()).toEqual(idsWith(status));
      expect(pages.at(-1)).toHaveLength(2);
      for (const link of links) expect(new URL(link, server.baseUrl).searchParams.get('status')).toBe(status);
    },
  );

  it('when following Link with status and limit=4, then the partial last page has no Link', async () => {
    const { pages } = await walk('/v1/pets?limit=4&status=available');
    expect(pages.map((page) => page.length)).toEqual([4, 2]);
    expect(pages.flat()).toEqual(idsWith('available'));
  });

  it('when a single page holds everything, then there is no Link', async () => {
    const response = await rest.listPets(`?limit=${TOTAL}`);
    expectStatus(response, 200);
    expect(response.body).toHaveLength(TOTAL);
    expect(response.headers.link).toBeUndefined();
  });
});

describe('a next link over a growing store', () => {
  it("when a pet is added after a page was served, then that page's Link still leads on, without repeats, to the new pet", async () => {
    const first = await rest.listPets('?limit=10');
    expectStatus(first, 200);
    const seen = first.body.map((pet) => pet.id);
    const added = await rest.addPet({ name: 'Late', categoryId: 1 });
    pets.push(added);
    const { pages } = await walk(nextLink(first.headers.link)!);
    seen.push(...pages.flat());
    expect(seen).toEqual(allIds());
    expect(seen.at(-1)).toBe(added.id);
  });
});
