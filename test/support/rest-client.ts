/**
 * One way for the tests to speak REST. Every answer to an operation of schema/openapi.yaml is checked
 * against the document before the test sees it; any other error answer must still be an Error body.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { Response } from 'supertest';
import { expect } from 'vitest';
import { assertErrorResponse, type ContractResponse, expectContract, operationAt } from './openapi-contract.ts';
import { AUTH, type TestServer } from './test-server.ts';

type Headers = Record<string, string>;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A pet as the REST contract spells it: a numeric id, a lower-case status that may be absent. */
export interface RestPet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

/** What node:http read: the status, the headers and the body as text and, when it parses, as JSON. */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: unknown;
}

export interface SendOptions {
  /** Replace the default key; `{}` sends no Authorization at all. */
  headers?: Headers;
  /** Sent as it is, under `contentType`. */
  body?: string;
  contentType?: string;
}

/** The URL of a `Link: <url>; rel="next"` header, or undefined when there is none. */
export function nextLink(link: string | undefined): string | undefined {
  if (link === undefined) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  expect(match, `not a single rel="next" link: ${link}`).not.toBeNull();
  return match?.[1];
}

export type RestClient = ReturnType<typeof restClient>;

/** The client of a server; it reads the server only when it sends, so a `useTestServer()` handle will do. */
export function restClient(server: TestServer) {
  function checked<T extends ContractResponse>(method: string, path: string, response: T): T {
    const base = server.restBasePath;
    const template = path.startsWith(base)
      ? operationAt(method, path.slice(base.length).split('?')[0] ?? '')
      : undefined;
    if (template) return expectContract(response, method, template, { basePath: base });
    if (response.status >= 400) assertErrorResponse(response);
    return response;
  }

  /** Any method on any path (the base path included), checked as the module comment says. */
  async function send(method: Method, path: string, options: SendOptions = {}): Promise<Response> {
    const { headers = AUTH, body, contentType = 'application/json' } = options;
    const call = server.request[method.toLowerCase() as Lowercase<Method>](path).set(headers);
    const response = body === undefined ? await call : await call.set('Content-Type', contentType).send(body);
    return checked(method, path, response);
  }

  /**
   * The same through node:http, for what supertest cannot shape: bytes that are not UTF-8, no
   * Content-Type at all, or a body in chunks (Transfer-Encoding: chunked, no Content-Length).
   */
  function sendRaw(
    method: Method,
    path: string,
    headers: Headers,
    chunks: Array<string | Buffer>,
  ): Promise<RawResponse> {
    return new Promise<RawResponse>((resolve, reject) => {
      const request = httpRequest(new URL(path, server.baseUrl), { method, headers }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
        });
        response.on('error', reject);
      });
      // A socket error after the answer arrived does not matter; before it, there is no answer at all.
      let answered = false;
      request.on('response', () => {
        answered = true;
      });
      request.on('error', (error) => {
        if (!answered) reject(new Error(`no HTTP response: ${error.message}`));
      });
      for (const chunk of chunks) request.write(chunk);
      request.end();
    }).then((response) => checked(method, path, response));
  }

  const client = {
    /** The supertest agent, unchecked: for what the REST client does not cover (HEAD, the document). */
    get request() {
      return server.request;
    },
    send,
    sendRaw,
    /** GET {base}/pets with a query string such as `?limit=2&status=sold`. */
    listPets: (query = '', headers: Headers = AUTH) => send('GET', `${server.restBasePath}/pets${query}`, { headers }),
    getPet: (petId: string | number, headers: Headers = AUTH) =>
      send('GET', `${server.restBasePath}/pets/${petId}`, { headers }),
    /** POST {base}/pets with this value as JSON. */
    createPet: (body: unknown, headers: Headers = AUTH) =>
      send('POST', `${server.restBasePath}/pets`, { headers, body: JSON.stringify(body) }),
    /** POST {base}/pets with this text as it is, under this Content-Type. */
    createPetFromText: (text: string, contentType = 'application/json', headers: Headers = AUTH) =>
      send('POST', `${server.restBasePath}/pets`, { headers, body: text, contentType }),
    /** GET a URL the service handed out (Location, Link). */
    follow: (url: string, headers: Headers = AUTH) => send('GET', url, { headers }),

    /** Adds a pet, which must succeed with 201, and returns it. */
    async addPet(body: Record<string, unknown>): Promise<RestPet> {
      const response = await client.createPet(body);
      expect(response.status, response.text).toBe(201);
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
    async storedPets(): Promise<RestPet[]> {
      const response = await client.listPets('?limit=100');
      expect(response.status).toBe(200);
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
        const response = await client.follow(url);
        expect(response.status).toBe(200);
        pages.push(response.body.map((pet: RestPet) => pet.id));
        url = nextLink(response.headers.link);
        if (url !== undefined) links.push(url);
      }
      return { pages, links };
    },
  };
  return client;
}
