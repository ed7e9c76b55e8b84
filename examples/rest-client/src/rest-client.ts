import { randomUUID } from 'node:crypto';
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './__generated__/openapi.ts';
import { nextPageUrl } from './link-header.ts';
import { errorFrom } from './rest-client-error.ts';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type ListPetsQuery = NonNullable<paths['/pets']['get']['parameters']['query']>;

export interface RestClientOptions {
  /** Where the REST API is mounted, e.g. http://127.0.0.1:4000/v1 (the contract's server, `/v1`). */
  baseUrl: string | URL;
  /** A bearer key, e.g. one issued with `npm run keys -- create NAME`. */
  apiKey: string;
  /** Any fetch: tests and proxies may pass their own. */
  fetch?: (request: Request) => Promise<Response>;
  /** Pages one listing may follow before it gives up: a service that links on forever is not followed forever. */
  maxPages?: number;
}

/** Adds the key to every request the client sends, and only to those: it never fetches a URL of another origin. */
function bearerKey(apiKey: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${apiKey}`);
      return request;
    },
  };
}

export function createRestClient({ baseUrl, apiKey, fetch = globalThis.fetch, maxPages = 100 }: RestClientOptions) {
  const root = String(baseUrl).replace(/\/+$/, '');
  const listUrl = `${root}/pets`;
  const api = createClient<paths>({ baseUrl: root, fetch: (request) => fetch(request) });
  api.use(bearerKey(apiKey));

  /** One create. Retry a failed one with the same idempotencyKey: the service stores the pet once. */
  async function createPet(pet: NewPet, { idempotencyKey = randomUUID() } = {}): Promise<Pet> {
    const { data, error, response } = await api.POST('/pets', {
      body: pet,
      params: { header: { 'Idempotency-Key': idempotencyKey } },
    });
    if (data === undefined) throw errorFrom(response, error);
    return data;
  }

  /** Deprecated by the contract (removed on 5 December 2030), still its only lookup by id. */
  async function getPet(petId: number): Promise<Pet> {
    const { data, error, response } = await api.GET('/pets/{petId}', { params: { path: { petId } } });
    if (data === undefined) throw errorFrom(response, error);
    return data;
  }

  /**
   * Every page of `GET /pets`, following `Link: rel="next"` as the service wrote it (limit, status
   * and its opaque cursor), until a page has no next link; throws past `maxPages`.
   */
  async function* listPetPages(query: ListPetsQuery = {}): AsyncGenerator<Pet[], void> {
    let next: URL | undefined;
    for (let page = 1; ; page++) {
      const search = next?.search;
      const { data, error, response } = await (search === undefined
        ? api.GET('/pets', { params: { query } })
        : api.GET('/pets', { querySerializer: () => search }));
      if (data === undefined) throw errorFrom(response, error);
      yield data;
      next = nextPageUrl(response.headers.get('Link'), response.url || listUrl, listUrl);
      if (!next) return;
      if (page >= maxPages) throw new Error(`GET /pets: stopped after ${maxPages} pages, more were linked`);
    }
  }

  return { api, createPet, getPet, listPetPages };
}

export type RestClient = ReturnType<typeof createRestClient>;
