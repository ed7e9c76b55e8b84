import { describe, expect, it } from 'vitest';
import { browserSuite, SKIP_BROWSER, saveScreenshot, useBrowser } from './support/browser.ts';
import { useTestServer } from './support/test-server.ts';

const server = useTestServer();

/** The public places the front door points to, each answering without a key. */
const LINKS = { graphiql: '/graphql', apiReference: '/v1/docs', openApi: '/v1/openapi.json', health: '/health' };

describe('when a client without a key asks for /', () => {
  it('then it gets 200 JSON naming the service and its public links, each of which answers without a key', async () => {
    const response = await server.request.get('/').set('Accept', 'application/json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers.vary).toBe('Accept');
    expect(response.body).toEqual({ service: 'petstore-gateway', description: expect.any(String), links: LINKS });
    for (const path of Object.values(LINKS)) {
      expect((await server.request.get(path).set('Accept', 'text/html')).status, path).toBe(200);
    }
  });

  it('then HEAD answers 200 with the same headers and no body', async () => {
    const response = await server.request.head('/');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.text ?? '').toBe('');
  });

  it('then it tells nothing of the deployment: no key, database, version or host', async () => {
    const text = (await server.request.get('/')).text + (await server.request.get('/').set('Accept', 'text/html')).text;
    expect(text).not.toMatch(/mongodb|ferretdb|dev_|test-key|127\.0\.0\.1|localhost|node v?\d|version/i);
  });

  it('then /favicon.ico, which browsers ask every origin for, redirects to the hashed icon', async () => {
    const response = await server.request.get('/favicon.ico');
    expect(response.status).toBe(301);
    const icon = await server.request.get(response.headers.location as string);
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/x-icon');
  });

  it('then another method gets 405 with Allow', async () => {
    const response = await server.request.post('/');
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
  });
});

describe.skipIf(SKIP_BROWSER)(browserSuite('The front door'), () => {
  const browser = useBrowser();

  it('shows a page naming the service whose links lead to GraphiQL, the API reference, the OpenAPI document and /health', {
    timeout: 30_000,
  }, async () => {
    const page = await browser().newPage();
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    const response = await page.goto(`${server.baseUrl}/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(await page.locator('h1').textContent()).toBe('petstore-gateway');
    const hrefs = await page.locator('a').evaluateAll((links) => links.map((link) => link.getAttribute('href')));
    expect(hrefs).toEqual(Object.values(LINKS));
    await saveScreenshot(page, 'front-door.png');
    await page.locator('a', { hasText: 'Health' }).click();
    await expect.poll(() => page.url()).toBe(`${server.baseUrl}/health`);
    expect(problems).toEqual([]);
  });
});
