import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserSuite, SKIP_BROWSER, saveScreenshot, useBrowser } from './support/browser.ts';
import { createPetOverGraphQL } from './support/graphql-client.ts';
import { startServiceProcess } from './support/service-process.ts';
import { API_KEY, useTestServer } from './support/test-server.ts';

/** Monaco renders with non-breaking spaces; normalise so JSON assertions read naturally. */
async function editorText(editor: Locator): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText keeps Monaco's line breaks; textContent drops them.
  return (await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');
}

/** Replaces a Monaco editor's content: clear first, then insertText (typing would trigger auto-closing). */
async function replaceEditorText(page: Page, editor: Locator, text: string): Promise<void> {
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await expect.poll(() => editorText(editor)).toBe('');
  await page.keyboard.insertText(text);
  await page.keyboard.press('Home'); // Scroll back to the line start so the screenshot shows it all.
  await expect.poll(() => editorText(editor)).toBe(text);
}

describe.skipIf(SKIP_BROWSER)(browserSuite('GraphiQL'), () => {
  const server = useTestServer();
  const browser = useBrowser();

  it('runs a query with the API key set in the Headers tab', { timeout: 60_000 }, async () => {
    await createPetOverGraphQL(server, { name: 'Browser Rex', categoryId: 1, status: 'AVAILABLE' });

    const page = await browser().newPage({ viewport: { width: 1280, height: 720 } });
    const requested: string[] = [];
    const pageErrors: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (error) => pageErrors.push(error.message));

    await page.goto(`${server.baseUrl}/graphql`);
    const queryEditor = page.locator('section.graphiql-query-editor .monaco-editor');
    await expect.poll(() => queryEditor.isVisible(), { timeout: 20_000 }).toBe(true);

    await page.locator('.graphiql-editor-tools button[data-name="headers"]').click();
    const headersEditor = page.locator('.monaco-editor[data-uri$="request-headers.json"]');
    await replaceEditorText(page, headersEditor, JSON.stringify({ Authorization: `Bearer ${API_KEY}` }));
    // One operation, so Execute runs it instead of asking which of the default two to run.
    await replaceEditorText(page, queryEditor, '{ pets(limit: 5) { id name status } }');
    // GraphiQL re-parses the editor after a debounce; until the tab is renamed it still holds the
    // two-operation default, and Execute would open the "which operation?" menu instead of running.
    const tabTitle = page.locator('.graphiql-tab-active .graphiql-tab-button');
    await expect.poll(() => tabTitle.getAttribute('title')).toBe('<untitled>');

    await page.locator('button.graphiql-execute-button').click();
    const result = page.locator('section.result-window');
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
      const page = await browser().newPage({ viewport: { width: 1280, height: 720 } });
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      const response = await page.goto(`http://localhost:${new URL(service.origin).port}/graphql`);
      expect(response?.headers()['cache-control']).toBe('no-store');
      const queryEditor = page.locator('section.graphiql-query-editor .monaco-editor');
      await expect.poll(() => queryEditor.isVisible(), { timeout: 20_000 }).toBe(true);
      await page.locator('.graphiql-editor-tools button[data-name="headers"]').click();
      const headersEditor = page.locator('.monaco-editor[data-uri$="request-headers.json"]');
      expect(await editorText(headersEditor)).toMatch(/"Authorization": "Bearer dev_[A-Za-z0-9_-]+"/);

      await replaceEditorText(page, queryEditor, '{ pets(limit: 1) { id } }');
      const tabTitle = page.locator('.graphiql-tab-active .graphiql-tab-button');
      await expect.poll(() => tabTitle.getAttribute('title')).toBe('<untitled>');
      await page.locator('button.graphiql-execute-button').click();
      const result = page.locator('section.result-window');
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
