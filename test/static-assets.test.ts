import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAssets } from '../src/static/build-assets.ts';
import { createStaticAssets, type StaticAssets } from '../src/static/static-assets.ts';
import { createGraphiQLPage } from '../src/static/tool-pages.ts';
import { rawRequest } from './support/raw-http.ts';
import { listenOnLoopback } from './support/test-server.ts';

/**
 * Assets under /assets and GraphiQL at /graphql alone, not the service: these tests reach paths the
 * service's edge would route elsewhere (`/assets/../package.json`, a revalidation without Accept).
 */
async function startAssetServer() {
  const { dir } = await buildAssets();
  const assets = createStaticAssets({ dir, urlPrefix: '/assets' });
  const graphiql = createGraphiQLPage({
    manifest: assets.manifest,
    graphqlEndpoint: '/graphql',
    title: 'Petstore GraphQL',
    defaultQuery: '{ pets { id } }',
    headers: JSON.stringify({ Authorization: 'Bearer <API_KEY>' }),
    keyHint: 'Set your API key in the Headers tab: {"Authorization": "Bearer <API_KEY>"}',
  });
  const listening = await listenOnLoopback((req, res) =>
    req.url === '/graphql' ? graphiql.send(req, res) : assets.handle(req, res),
  );
  return { ...listening, assets };
}

/** node:http rather than fetch, which would decode the body and hide the transferred size. */
const get = (url: string, headers: Record<string, string> = {}, method = 'GET') => rawRequest(url, { method, headers });

describe('static assets (GraphiQL and Swagger UI files)', () => {
  let server: { http: Server; assets: StaticAssets; baseUrl: string };
  let bundleUrl: string;
  let bundle: Buffer;

  beforeAll(async () => {
    server = await startAssetServer();
    const file = server.assets.manifest.assets['graphiql.js'] as string;
    bundleUrl = `${server.baseUrl}/assets/${file}`;
    bundle = readFileSync(fileURLToPath(new URL(`../.assets/${file}`, import.meta.url)));
  });
  afterAll(() => new Promise<void>((resolve) => (server ? server.http.close(() => resolve()) : resolve())));

  it('sends brotli when the browser accepts it, gzip when it only takes gzip, identity otherwise', async () => {
    const br = await get(bundleUrl, { 'Accept-Encoding': 'gzip, deflate, br, zstd' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/^text\/javascript/);
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(brotliDecompressSync(br.body).equals(bundle)).toBe(true);

    const gzip = await get(bundleUrl, { 'Accept-Encoding': 'br;q=0, gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).equals(bundle)).toBe(true);

    const identity = await get(bundleUrl);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.equals(bundle)).toBe(true);
    expect(br.body.length).toBeLessThan(gzip.body.length);
  });

  it('marks hashed files immutable and answers 304 to a reload with the strong ETag', async () => {
    const first = await get(bundleUrl, { 'Accept-Encoding': 'br' });
    expect(first.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);

    const reload = await get(bundleUrl, { 'Accept-Encoding': 'br', 'If-None-Match': etag });
    expect(reload.status).toBe(304);
    expect(reload.body.length).toBe(0);
    expect(reload.headers.etag).toBe(etag);
    expect(reload.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    // Another encoding is another representation: its tag must not validate the brotli one.
    expect((await get(bundleUrl, { 'Accept-Encoding': 'gzip', 'If-None-Match': etag })).status).toBe(200);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const head = await get(bundleUrl, { 'Accept-Encoding': 'br' }, 'HEAD');
    const getResponse = await get(bundleUrl, { 'Accept-Encoding': 'br' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(String(getResponse.body.length));
    expect(head.headers.etag).toBe(getResponse.headers.etag);
  });

  it('answers 404 with the error body for a file the build did not write', async () => {
    for (const path of ['/assets/graphiql.00000000.js', '/assets/manifest.json', '/assets/../package.json']) {
      const response = await get(`${server.baseUrl}${path}`);
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(response.body.toString())).toEqual({
        code: 'ROUTE_NOT_FOUND',
        message: expect.stringContaining('No asset at'),
        status: 404,
      });
    }
  });

  it('serves the GraphiQL page as a small shell that revalidates, 304 while unchanged', async () => {
    const page = await get(`${server.baseUrl}/graphql`, { Accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.body.length).toBeLessThan(4_000);
    expect(page.body.toString()).toContain('Set your API key in the Headers tab');
    const reload = await get(`${server.baseUrl}/graphql`, { 'If-None-Match': page.headers.etag as string });
    expect(reload.status).toBe(304);
    expect(reload.body.length).toBe(0);
  });

  it('loads GraphiQL the first time in at most 2.5 MB with brotli', async () => {
    const shell = await get(`${server.baseUrl}/graphql`, { Accept: 'text/html' });
    // Everything the shell names: link/script URLs and the Monaco worker URLs in its JSON config.
    const referenced = [...new Set(shell.body.toString().match(/\/assets\/[\w.-]+/g))];
    expect(referenced.length).toBe(7);
    let transferred = shell.body.length;
    for (const path of referenced) {
      const response = await get(`${server.baseUrl}${path}`, { 'Accept-Encoding': 'gzip, deflate, br' });
      expect(response.status, path).toBe(200);
      transferred += response.body.length;
    }
    console.log(`GraphiQL first load with br: ${transferred} bytes in ${referenced.length + 1} responses`);
    expect(transferred).toBeLessThanOrEqual(2_500_000);
  });

  it('builds nothing when .assets is up to date', async () => {
    const again = await buildAssets();
    expect(again.built).toBe(false);
    expect(again.milliseconds).toBeLessThan(500);
  });

  it('refuses to start without built assets and says how to build them', () => {
    expect(() => createStaticAssets({ dir: '/nonexistent/.assets', urlPrefix: '/assets' })).toThrow(/npm run build/);
  });
});

describe('the 9 MB GraphiQL renderer', () => {
  it('is imported by no module under src/ but the build step', () => {
    const srcDir = fileURLToPath(new URL('../src', import.meta.url));
    const importers = (readdirSync(srcDir, { recursive: true }) as string[])
      .filter((file) => /\.[cm]?[jt]s$/.test(file))
      .filter((file) =>
        /['"]@graphql-yoga\/render-graphiql(\/[\w./-]*)?['"]/.test(readFileSync(join(srcDir, file), 'utf8')),
      )
      .map((file) => relative(srcDir, join(srcDir, file)).replaceAll('\\', '/'));
    expect(importers).toEqual(['static/build-assets.ts']);
  });
});
