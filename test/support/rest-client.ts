/**
 * One way for the tests to speak REST. Every answer to an operation of schema/openapi.yaml is checked
 * against the document before the test sees it, which is what makes it the type ./rest-types.ts gives
 * that operation's answers; any other error answer must still be an Error body.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Response } from 'supertest';
import { expect } from 'vitest';
import { assertErrorResponse, expectContract, operationAt } from './openapi-contract.ts';
import { rawRequest } from './raw-http.ts';
import {
  type ListPetsResponse,
  type NewPet,
  OPERATIONS,
  type OperationId,
  type Pet,
  type ResponseOf,
  type RestResponse,
} from './rest-types.ts';
import { AUTH, type TestServer } from './test-server.ts';

type RequestHeaders = Record<string, string>;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The name older test files use for a REST pet. */
export type RestPet = Pet;

export interface SendOptions {
  /** Replace the default key; `{}` sends no Authorization at all. */
  headers?: RequestHeaders;
  /** Sent as it is, under `contentType`. */
  body?: string;
  contentType?: string;
}

/**
 * Status first: fails unless the answer has this status (showing its body), and from here on the
 * compiler knows the body and headers the document gives that status.
 */
export function expectStatus<R extends { status: number; text: string }, S extends R['status']>(
  response: R,
  status: S,
): asserts response is R & { status: S } {
  expect(response.status, response.text).toBe(status);
}

/** The URL of a `Link: <url>; rel="next"` header, or undefined when there is none. */
export function nextLink(link: string | undefined): string | undefined {
  if (link === undefined) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  expect(match, `not a single rel="next" link: ${link}`).not.toBeNull();
  return match?.[1];
}

/** What node:http read, as supertest would give it: a body that does not parse as JSON is undefined. */
function rawAnswer(status: number, headers: IncomingHttpHeaders, text: string): RestResponse {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const flat = Object.entries(headers).flatMap(([name, value]) =>
    value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]],
  );
  return { status, headers: Object.fromEntries(flat), text, body };
}

export type RestClient = ReturnType<typeof restClient>;

/** The client of a server; it reads the server only when it sends, so a `useTestServer()` handle will do. */
export function restClient(server: TestServer) {
  /** The template of the document's operation a path of this server (base path included) is, if any. */
  function operationOf(method: string, path: string) {
    const base = server.restBasePath;
    return path.startsWith(base) ? operationAt(method, path.slice(base.length).split('?')[0] ?? '') : undefined;
  }

  function checked(method: string, path: string, response: RestResponse): RestResponse {
    const template = operationOf(method, path);
    if (template) return expectContract(response, method, template, { basePath: server.restBasePath });
    if (response.status >= 400) assertErrorResponse(response);
    return response;
  }

  /** Any method on any path (the base path included), checked as the module comment says. */
  async function send(method: Method, path: string, options: SendOptions = {}): Promise<RestResponse> {
    const { headers = AUTH, body, contentType = 'application/json' } = options;
    const call = server.request[method.toLowerCase() as Lowercase<Method>](path).set(headers);
    const response: Response = body === undefined ? await call : await call.set('Content-Type', contentType).send(body);
    const { status, headers: received, text } = response;
    return checked(method, path, { status, headers: received, text, body: response.body });
  }

  /** An operation of the document: `path` must be one of its, so the contract check vouches for the type. */
  async function perform<O extends OperationId>(operationId: O, path: string, options?: SendOptions) {
    const { method, path: template } = OPERATIONS[operationId];
    expect(operationOf(method, path), `${method} ${path} is not ${operationId}`).toBe(template);
    return (await send(method, path, options)) as ResponseOf<O>;
  }

  /**
   * The same through node:http, for what supertest cannot shape: bytes that are not UTF-8, no
   * Content-Type at all, or a body in chunks (Transfer-Encoding: chunked, no Content-Length).
   */
  async function sendRaw(
    method: Method,
    path: string,
    headers: RequestHeaders,
    chunks: Array<string | Buffer>,
  ): Promise<RestResponse> {
    const response = await rawRequest(new URL(path, server.baseUrl), { method, headers, chunks });
    return checked(method, path, rawAnswer(response.status, response.headers, response.body.toString('utf8')));
  }

  const pets = (rest = '') => `${server.restBasePath}/pets${rest}`;

  const client = {
    /** The supertest agent, unchecked: for what the REST client does not cover (HEAD, the document). */
    get request() {
      return server.request;
    },
    send,
    sendRaw,
    /** GET {base}/pets with a query string such as `?limit=2&status=sold`. */
    listPets: (query = '', headers: RequestHeaders = AUTH) => perform('listPets', pets(query), { headers }),
    getPet: (petId: string | number, headers: RequestHeaders = AUTH) =>
      perform('getPet', pets(`/${petId}`), { headers }),
    /** POST {base}/pets with this value as JSON (any value: the service, not tsc, has to refuse a bad one). */
    createPet: (body: unknown, headers: RequestHeaders = AUTH) =>
      perform('createPet', pets(), { headers, body: JSON.stringify(body) }),
    /** POST {base}/pets with this text as it is, under this Content-Type. */
    createPetFromText: (text: string, contentType = 'application/json', headers: RequestHeaders = AUTH) =>
      perform('createPet', pets(), { headers, body: text, contentType }),
    /** GET the `Location` of a created pet. */
    followLocation: (url: string, headers: RequestHeaders = AUTH) => perform('getPet', url, { headers }),
    /** GET the rel="next" URL of a `Link` header. */
    followNext: (url: string, headers: RequestHeaders = AUTH): Promise<ListPetsResponse> =>
      perform('listPets', url, { headers }),

    /** Adds a pet, which must succeed with 201, and returns it. */
    async addPet(body: NewPet): Promise<Pet> {
      const response = await client.createPet(body);
      expectStatus(response, 201);
      return response.body;
    },

    /** Sends, then fails unless the stored pets are just what they were before. */
    async storesNothing<T>(send: () => Promise<T>): Promise<T> {
      const before = await client.storedPets();
      const response = await send();
      expect(await client.storedPets()).toEqual(before);
      return response;
    },

    /** Every stored pet, through the contract itself (a test file stores far fewer than 100). */
    async storedPets(): Promise<Pet[]> {
      const response = await client.listPets('?limit=100');
      expectStatus(response, 200);
      expect(response.body.length).toBeLessThan(100);
      return response.body;
    },

    /** Follows rel="next" from `first` to the last page; returns each page's ids and the links followed. */
    async walk(first: string, maxPages = 100): Promise<{ pages: number[][]; links: string[] }> {
      const pages: number[][] = [];
      const links: string[] = [];
      let url: string | undefined = first;
      while (url !== undefined) {
        expect(pages.length, 'too many pages: the links loop').toBeLessThan(maxPages);
        const response = await client.followNext(url);
        expectStatus(response, 200);
        pages.push(response.body.map((pet) => pet.id));
        url = nextLink(response.headers.link);
        if (url !== undefined) links.push(url);
      }
      return { pages, links };
    },
  };
  return client;
}
