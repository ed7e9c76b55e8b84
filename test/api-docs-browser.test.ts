import { beforeAll, describe, expect, it } from 'vitest';
import { browserSuite, SKIP_BROWSER, saveScreenshot, useBrowser } from './support/browser.ts';
import { restClient } from './support/rest-client.ts';
import type { Pet } from './support/rest-types.ts';
import { API_KEY, useTestServer } from './support/test-server.ts';

describe.skipIf(SKIP_BROWSER)(browserSuite('API docs'), () => {
  const server = useTestServer();
  const browser = useBrowser();

  beforeAll(async () => {
    // Swagger UI sends the document's examples, cursor=cGV0OjIw ("after pet 20") among them: the
    // answer lists only the pets past id 20 with status available.
    const rest = restClient(server);
    let pet: Pet;
    do pet = await rest.addPet({ name: 'Docs Rex', categoryId: 1, status: 'available' });
    while (pet.id <= 20);
  });

  it('tries GET /pets with the bearer key set through Authorize, loading nothing off-host', {
    timeout: 60_000,
  }, async () => {
    const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
    const requested: string[] = [];
    const problems: string[] = [];
    /** The Authorization header of each listPets call the page makes. */
    const petCalls: Array<string | undefined> = [];
    page.on('request', (request) => {
      requested.push(request.url());
      if (new URL(request.url()).pathname === '/v1/pets') petCalls.push(request.headers().authorization);
    });
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

    expect(petCalls).toEqual([`Bearer ${API_KEY}`]);
    await saveScreenshot(page, 'api-docs.png', { fullPage: true });
    expect(problems).toEqual([]);
    const foreign = requested.filter((url) => !url.startsWith('data:') && new URL(url).hostname !== '127.0.0.1');
    expect(foreign).toEqual([]);
  });
});
