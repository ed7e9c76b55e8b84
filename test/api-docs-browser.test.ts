import type { Page, Request, Response } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  browserSuite,
  FIRST_SCREEN,
  SKIP_BROWSER,
  saveScreenshot,
  useBrowser,
  watchedPage,
} from './support/browser.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { PET_STATUSES, type Pet, type PetStatus } from './support/rest-types.ts';
import { atLocalhost, startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import { API_KEY, uniqueDbName, useTestServer } from './support/test-server.ts';

describe.skipIf(SKIP_BROWSER)(browserSuite('API docs'), () => {
  const server = useTestServer();
  const browser = useBrowser();
  const rest = restClient(server);

  beforeAll(async () => {
    // Every status and none, in turn, past id 20: a status or cursor the page sent on its own
    // would leave some of them out of the first page.
    const statuses: Array<PetStatus | undefined> = [...PET_STATUSES, undefined];
    let pet: Pet;
    let i = 0;
    do {
      const status = statuses[i % statuses.length];
      pet = await rest.addPet({ name: `Docs Rex ${i++}`, categoryId: 1, ...(status && { status }) });
    } while (pet.id <= 20);
  });

  const isPets = (request: Request, method: string) =>
    request.method() === method && new URL(request.url()).pathname === '/v1/pets';

  /** The docs page with the key set through Authorize; `clean()` checks nothing went wrong or off-host. */
  async function openDocs(): Promise<{ page: Page; clean(): void }> {
    const { page, pageErrors: problems } = await watchedPage(browser(), { width: 1280, height: 900 });
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
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

    return {
      page,
      clean() {
        expect(problems).toEqual([]);
        const foreign = requested.filter((url) => !url.startsWith('data:') && new URL(url).hostname !== '127.0.0.1');
        expect(foreign).toEqual([]);
      },
    };
  }

  it('tries GET /pets with the key set through Authorize and untouched parameters: the first page of every pet', {
    timeout: 60_000,
  }, async () => {
    const { page, clean } = await openDocs();
    const listPets = page.locator('#operations-pets-listPets');
    await listPets.locator('.opblock-summary').first().click();
    const answered = page.waitForResponse((response) => isPets(response.request(), 'GET'));
    await listPets.locator('button.execute').click();
    const response = await answered;

    // Only the contract's default limit: no example status or cursor.
    expect(new URL(response.url()).search).toBe('?limit=20');
    expect(response.request().headers().authorization).toBe(`Bearer ${API_KEY}`);
    const unfiltered = await rest.listPets();
    expectStatus(unfiltered, 200);
    const shown = (await response.json()) as Pet[];
    expect(shown).toEqual(unfiltered.body);
    expect(new Set(shown.map((pet) => pet.status))).toEqual(new Set([...PET_STATUSES, undefined]));

    const responseBody = listPets.locator('.live-responses-table .response-col_description pre').first();
    await expect.poll(() => responseBody.textContent(), { timeout: 20_000 }).toContain('Docs Rex 0');
    expect(
      await listPets.locator('.live-responses-table tr.response .response-col_status').first().textContent(),
    ).toContain('200');
    await saveScreenshot(page, 'api-docs.png', { fullPage: true });
    clean();
  });

  it('adds a new pet on every Execute of POST /pets, and replays only under a key the user typed', {
    timeout: 60_000,
  }, async () => {
    const { page, clean } = await openDocs();
    const createPet = page.locator('#operations-pets-createPet');
    await createPet.locator('.opblock-summary').first().click();
    const execute = async (name: string): Promise<Response> => {
      await createPet.locator('textarea.body-param__text').fill(JSON.stringify({ name, categoryId: 2 }));
      const answered = page.waitForResponse((response) => isPets(response.request(), 'POST'));
      await createPet.locator('button.execute').click();
      const response = await answered;
      expect(response.status(), await response.text()).toBe(201);
      return response;
    };
    const keyOf = (response: Response) => response.request().headers()['idempotency-key'];

    const first = await execute('Docs Tom');
    const second = await execute('Docs Jerry');
    expect(keyOf(first)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keyOf(second)).toMatch(/^[0-9a-f-]{36}$/);
    expect(keyOf(second)).not.toBe(keyOf(first));

    // A key the user typed is theirs: the same body under it again is a retry, answered by replay.
    await createPet.locator('tr[data-param-name="Idempotency-Key"] input').fill('docs-retry-1');
    const typed = await execute('Docs Spike');
    const retried = await execute('Docs Spike');
    expect([keyOf(typed), keyOf(retried)]).toEqual(['docs-retry-1', 'docs-retry-1']);
    expect((await retried.allHeaders())['idempotent-replayed']).toBe('true');

    const names = (await rest.storedPets()).map((pet) => pet.name).filter((name) => !name.startsWith('Docs Rex'));
    expect(names).toEqual(['Docs Tom', 'Docs Jerry', 'Docs Spike']);
    clean();
  });
});

describe.skipIf(SKIP_BROWSER)(browserSuite("A newcomer's start, then the REST reference"), () => {
  const browser = useBrowser();

  it('opens at localhost with the development key authorized: the first Execute of GET /pets answers 200', {
    timeout: 120_000,
  }, async () => {
    // No API_KEYS and no issued key on a loopback HOST: the service makes a development key.
    const service = await startServiceOnRunDatabase({ dbName: uniqueDbName('docs-newcomer'), env: { API_KEYS: '' } });
    try {
      const { page, pageErrors: problems } = await watchedPage(browser(), FIRST_SCREEN);
      const loaded = await page.goto(atLocalhost(service, '/v1/docs'));
      expect(loaded?.headers()['cache-control']).toBe('no-store');
      const authorize = page.locator('.scheme-container button.authorize');
      await expect.poll(() => authorize.getAttribute('class'), { timeout: 20_000 }).toMatch(/(^|\s)locked(\s|$)/);
      // Authorize is on the first screen: the introduction is folded after its first paragraph.
      const box = await authorize.boundingBox();
      expect(box && box.y + box.height).toBeLessThanOrEqual(FIRST_SCREEN.height);
      await saveScreenshot(page, 'api-docs-first-screen.png');
      // The rest of the introduction is one click away.
      const pagination = page.locator('.info .description h2', { hasText: 'Pagination' });
      expect(await pagination.isVisible()).toBe(false);
      await page.locator('button.intro-toggle').click();
      await expect.poll(() => pagination.isVisible()).toBe(true);

      const listPets = page.locator('#operations-pets-listPets');
      await listPets.locator('.opblock-summary').first().click();
      const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/pets');
      await listPets.locator('button.execute').click();
      const response = await answered;
      expect(response.status()).toBe(200);
      expect(response.request().headers().authorization).toMatch(/^Bearer dev_[A-Za-z0-9_-]{32}$/);
      await saveScreenshot(page, 'api-docs-newcomer.png');
      expect(problems).toEqual([]);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });

  it('with API_KEYS set, the page at localhost authorizes nothing and the first Execute answers 401', {
    timeout: 120_000,
  }, async () => {
    const service = await startServiceOnRunDatabase({ dbName: uniqueDbName('docs-keys') });
    try {
      const page = await browser().newPage({ viewport: FIRST_SCREEN });
      const loaded = await page.goto(atLocalhost(service, '/v1/docs'));
      expect(loaded?.headers()['cache-control']).toBe('no-cache');
      expect(await loaded?.text()).not.toContain('"authorize"');
      const authorize = page.locator('.scheme-container button.authorize');
      await expect.poll(() => authorize.isVisible(), { timeout: 20_000 }).toBe(true);
      expect(await authorize.getAttribute('class')).toMatch(/(^|\s)unlocked(\s|$)/);
      const listPets = page.locator('#operations-pets-listPets');
      await listPets.locator('.opblock-summary').first().click();
      const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/pets');
      await listPets.locator('button.execute').click();
      expect((await answered).status()).toBe(401);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});
