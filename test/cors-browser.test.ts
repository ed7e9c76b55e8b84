import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSuite, SKIP_BROWSER, useBrowser } from './support/browser.ts';
import { restClient } from './support/rest-client.ts';
import { API_KEY, startTestServer, type TestServer } from './support/test-server.ts';

/** A browser app's page on its own port: it holds no script, the test runs fetch inside it. */
async function servePage(): Promise<{ http: Server; origin: string }> {
  const http = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><title>app</title>');
  });
  await new Promise<void>((listening) => http.listen(0, '127.0.0.1', listening));
  return { http, origin: `http://localhost:${(http.address() as AddressInfo).port}` };
}

interface Seen {
  status: number;
  link: string | null;
  rateLimit: string | null;
  body: unknown;
}

/** fetch from the page's own script: what page code can read of the answer, or why fetch rejected. */
function fetchFromPage(
  page: Page,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
) {
  return page.evaluate(
    async ({ url, init }): Promise<Seen | { rejected: string }> => {
      try {
        const response = await fetch(url, init);
        const { status, headers } = response;
        return { status, link: headers.get('Link'), rateLimit: headers.get('RateLimit'), body: await response.json() };
      } catch (error) {
        return { rejected: String(error) };
      }
    },
    { url, init },
  );
}

describe.skipIf(SKIP_BROWSER)(browserSuite('A browser app on another origin (CORS)'), () => {
  const browser = useBrowser();
  let app: { http: Server; origin: string };
  let stranger: { http: Server; origin: string };
  let server: TestServer;
  const bearer = { Authorization: `Bearer ${API_KEY}` };

  beforeAll(async () => {
    app = await servePage();
    stranger = await servePage();
    server = await startTestServer({ corsOrigins: app.origin });
    const rest = restClient(server);
    for (const name of ['Cors Rex', 'Cors Fido']) await rest.addPet({ name, categoryId: 1 });
  });
  afterAll(async () => {
    await server?.close();
    for (const page of [app, stranger]) page?.http.close();
  });

  async function openPage(origin: string): Promise<Page> {
    const page = await browser().newPage();
    await page.goto(`${origin}/`);
    return page;
  }

  it('lists pets over REST with a key and reads Link and RateLimit', { timeout: 30_000 }, async () => {
    const page = await openPage(app.origin);
    const seen = await fetchFromPage(page, `${server.baseUrl}/v1/pets?limit=1`, { headers: bearer });
    expect(seen).toMatchObject({ status: 200, body: [expect.objectContaining({ name: expect.any(String) })] });
    const { link, rateLimit } = seen as Seen;
    expect(link).toMatch(/^<[^>]*\/v1\/pets\?[^>]*cursor=[^>]*>; rel="next"$/);
    expect(rateLimit).toMatch(/^"default";r=\d+;t=\d+$/);
  });

  it('lists pets over GraphQL (POST, JSON) with a key and reads RateLimit', { timeout: 30_000 }, async () => {
    const page = await openPage(app.origin);
    const seen = await fetchFromPage(page, `${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { ...bearer, 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: '{ pets(limit: 5) { id name } }' }),
    });
    expect(seen).toMatchObject({ status: 200, body: { data: { pets: expect.any(Array) } } });
    const { body, rateLimit } = seen as Seen;
    const names = (body as { data: { pets: { name: string }[] } }).data.pets.map((pet) => pet.name);
    expect(names).toEqual(expect.arrayContaining(['Cors Rex', 'Cors Fido']));
    expect(rateLimit).toMatch(/^"default";r=\d+;t=\d+$/);
  });

  it('reads the 401 of a wrong key (its preflight passed without one)', { timeout: 30_000 }, async () => {
    const page = await openPage(app.origin);
    const seen = await fetchFromPage(page, `${server.baseUrl}/v1/pets`, { headers: { Authorization: 'Bearer nope' } });
    expect(seen).toMatchObject({ status: 401, body: { code: 'UNAUTHENTICATED' } });
  });

  it('a page from an origin not listed is blocked: fetch rejects, with a key or without', {
    timeout: 30_000,
  }, async () => {
    const page = await openPage(stranger.origin);
    const withKey = await fetchFromPage(page, `${server.baseUrl}/v1/pets?limit=1`, { headers: bearer });
    expect(withKey).toEqual({ rejected: expect.stringContaining('TypeError') });
    const graphql = await fetchFromPage(page, `${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { ...bearer, 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: '{ pets { id } }' }),
    });
    expect(graphql).toEqual({ rejected: expect.stringContaining('TypeError') });
    // A simple request goes out without a preflight, but its answer still cannot be read.
    const simple = await fetchFromPage(page, `${server.baseUrl}/v1/pets`, {});
    expect(simple).toEqual({ rejected: expect.stringContaining('TypeError') });
  });
});
