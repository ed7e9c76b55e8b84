import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { browserSuite, SKIP_BROWSER, saveScreenshot, useBrowser, watchedPage } from './support/browser.ts';
import {
  editorText,
  executeButtonOf,
  headersEditorOf,
  queryEditorOf,
  replaceEditorText,
  resultOf,
  setDocument,
} from './support/graphiql-page.ts';
import { createPetOverGraphQL } from './support/graphql-client.ts';
import { atLocalhost } from './support/service-on-run-database.ts';
import { startServiceProcess } from './support/service-process.ts';
import { API_KEY, useTestServer } from './support/test-server.ts';

describe.skipIf(SKIP_BROWSER)(browserSuite('GraphiQL'), () => {
  const server = useTestServer();
  const browser = useBrowser();

  it('runs a query with the API key set in the Headers tab', { timeout: 60_000 }, async () => {
    await createPetOverGraphQL(server, { name: 'Browser Rex', categoryId: 1, status: 'AVAILABLE' });

    const { page, pageErrors } = await watchedPage(browser());
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));

    await page.goto(`${server.baseUrl}/graphql`);
    const queryEditor = await queryEditorOf(page);
    const headersEditor = await headersEditorOf(page);
    await replaceEditorText(page, headersEditor, JSON.stringify({ Authorization: `Bearer ${API_KEY}` }));
    // One operation, so Execute runs it instead of asking which of the default two to run.
    await setDocument(page, queryEditor, '{ pets(limit: 5) { id name status } }');

    await executeButtonOf(page).click();
    const result = resultOf(page);
    await expect.poll(() => editorText(result), { timeout: 20_000 }).toContain('Browser Rex');
    const text = await editorText(result);
    expect(text).toMatch(/"name":\s*"Browser Rex"/);
    expect(text).toContain('"status": "AVAILABLE"');
    expect(text).not.toContain('"errors"');

    await saveScreenshot(page, 'graphiql.png');
    expect(pageErrors).toEqual([]);
    // GraphiQL ships inlined (Monaco workers as blob: URLs); anything off-host would mean a CDN dependency.
    const foreign = requested.filter(
      (url) => !url.startsWith('data:') && new URL(url.replace(/^blob:/, '')).hostname !== '127.0.0.1',
    );
    expect(foreign).toEqual([]);
  });
});

describe.skipIf(SKIP_BROWSER)(browserSuite("A newcomer's npm start, then GraphiQL"), () => {
  const browser = useBrowser();

  it('opens at localhost with the development key pre-filled, and a query runs as it is', {
    timeout: 120_000,
  }, async () => {
    // Nothing set but a data directory of its own: no API_KEYS, the embedded database, npm start.
    const dataDir = mkdtempSync(join(tmpdir(), 'petstore-newcomer-'));
    const service = await startServiceProcess({ via: 'npm', echo: 'none', env: { API_KEYS: '', DATA_DIR: dataDir } });
    try {
      const { page, pageErrors } = await watchedPage(browser());
      const response = await page.goto(atLocalhost(service, '/graphql'));
      expect(response?.headers()['cache-control']).toBe('no-store');
      const queryEditor = await queryEditorOf(page);
      const headersEditor = await headersEditorOf(page);
      expect(await editorText(headersEditor)).toMatch(/"Authorization": "Bearer dev_[A-Za-z0-9_-]+"/);

      await setDocument(page, queryEditor, '{ pets(limit: 1) { id } }');
      await executeButtonOf(page).click();
      const result = resultOf(page);
      await expect.poll(() => editorText(result), { timeout: 20_000 }).toContain('"pets": []');
      expect(await editorText(result)).not.toContain('"errors"');
      await saveScreenshot(page, 'graphiql-newcomer.png');
      expect(pageErrors).toEqual([]);
    } finally {
      expect(await service.stop()).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
