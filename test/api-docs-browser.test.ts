import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOpenApiDocument } from '../src/rest/openapi-document.ts';
import { createApiDocsPage } from '../src/static/api-docs-page.ts';
import { buildAssets } from '../src/static/build-assets.ts';
import { createStaticAssets } from '../src/static/static-assets.ts';

const API_KEY = 'docs-test-key-cccccccccccccccccccc';
const PET = { id: 7, name: 'Docs Rex', categoryId: 1, status: 'available' };

/** Docs, assets, the contract and one REST route on loopback: the service fixture can replace it. */
async function startDocsServer() {
  const { dir } = await buildAssets();
  const assets = createStaticAssets({ dir, urlPrefix: '/assets' });
  const docs = createApiDocsPage({
    manifest: assets.manifest,
    openApiUrl: '/v1/openapi.json',
    title: 'Petstore REST API',
  });
  const contract = JSON.stringify({ ...loadOpenApiDocument(), servers: [{ url: '/v1' }] });
  const petRequests: IncomingHttpHeaders[] = [];
  const http = createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path === '/v1/docs') return docs.send(req, res);
    if (path === '/v1/openapi.json') return res.writeHead(200, { 'Content-Type': 'application/json' }).end(contract);
    if (path === '/v1/pets') {
      petRequests.push(req.headers);
      const ok = req.headers.authorization === `Bearer ${API_KEY}`;
      return res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' }).end(JSON.stringify(ok ? [PET] : {}));
    }
    assets.handle(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { http, petRequests, baseUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
}

// Debian's chromium (apt-get install -y chromium); playwright's own download needs internet we don't have.
const CHROMIUM = '/usr/bin/chromium';
// Locally a missing browser is a skip; in CI it must fail, so the check can't silently vanish.
const SKIP = !existsSync(CHROMIUM) && process.env.CI !== 'true';
const SCREENSHOT = fileURLToPath(new URL('../test-artifacts/api-docs.png', import.meta.url));

describe.skipIf(SKIP)(
  SKIP
    ? `API docs in headless Chromium (SKIPPED: ${CHROMIUM} missing; apt-get install -y chromium)`
    : 'API docs in headless Chromium',
  () => {
    let server: Awaited<ReturnType<typeof startDocsServer>>;
    let browser: Browser;

    beforeAll(async () => {
      server = await startDocsServer();
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
        ],
      });
    });

    afterAll(async () => {
      await browser?.close();
      await new Promise<void>((resolve) => (server ? (server.http as Server).close(() => resolve()) : resolve()));
    });

    it('tries GET /pets with the bearer key set through Authorize, loading nothing off-host', {
      timeout: 60_000,
    }, async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const requested: string[] = [];
      const problems: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      page.on('pageerror', (error) => problems.push(error.message));
      // CSP violations and failed loads only show as console errors.
      page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));

      await page.goto(`${server.baseUrl}/v1/docs`);
      await expect
        .poll(() => page.locator('.swagger-ui .info .title').textContent(), { timeout: 20_000 })
        .toContain('Petstore REST API');

      await page.locator('.scheme-container button.authorize').click();
      await page.locator('.auth-container input').fill(API_KEY);
      await page.locator('.auth-container button[type=submit]').click();
      await page.locator('.modal-ux button.btn-done').click();

      const listPets = page.locator('#operations-pets-listPets');
      await listPets.locator('.opblock-summary').first().click();
      await listPets.locator('button.execute').click();
      const responseBody = listPets.locator('.live-responses-table .response-col_description pre').first();
      await expect.poll(() => responseBody.textContent(), { timeout: 20_000 }).toContain('Docs Rex');
      expect(
        await listPets.locator('.live-responses-table tr.response .response-col_status').first().textContent(),
      ).toContain('200');

      expect(server.petRequests.map((headers) => headers.authorization)).toEqual([`Bearer ${API_KEY}`]);
      mkdirSync(dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(statSync(SCREENSHOT).size).toBeGreaterThan(0);
      expect(problems).toEqual([]);
      const foreign = requested.filter((url) => !url.startsWith('data:') && new URL(url).hostname !== '127.0.0.1');
      expect(foreign).toEqual([]);
    });
  },
);
