import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, AUTH, graphqlRequest, startTestServer, type TestServer } from './support/test-server.ts';

// Debian's chromium (apt-get install -y chromium); playwright's own download needs internet we don't have.
const CHROMIUM = '/usr/bin/chromium';
// Locally a missing browser is a skip; in CI it must fail, so the check can't silently vanish.
const SKIP = !existsSync(CHROMIUM) && process.env.CI !== 'true';
const SCREENSHOT = fileURLToPath(new URL('../test-artifacts/graphiql.png', import.meta.url));

/** Monaco renders with non-breaking spaces; normalise so JSON assertions read naturally. */
async function editorText(editor: Locator): Promise<string> {
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

describe.skipIf(SKIP)(
  SKIP ? `GraphiQL in headless Chromium (SKIPPED: ${CHROMIUM} missing; apt-get install -y chromium)` : 'GraphiQL in headless Chromium',
  () => {
    let server: TestServer;
    let browser: Browser;

    beforeAll(async () => {
      server = await startTestServer();
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
          '--disable-component-update', '--disable-sync', '--no-first-run'],
      });
    });

    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    it('runs a query with the API key set in the Headers tab', { timeout: 60_000 }, async () => {
      const created = await graphqlRequest(server, /* GraphQL */ `
        mutation { createPet(input: { name: "Browser Rex", categoryId: 1, status: AVAILABLE }) { id } }
      `, {}, AUTH);
      expect(created.body.errors).toBeUndefined();

      const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
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

      mkdirSync(dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT });
      expect(statSync(SCREENSHOT).size).toBeGreaterThan(0);
      expect(pageErrors).toEqual([]);
      // GraphiQL ships inlined (Monaco workers as blob: URLs); anything off-host would mean a CDN dependency.
      const foreign = requested.filter(
        (url) => !url.startsWith('data:') && new URL(url.replace(/^blob:/, '')).hostname !== '127.0.0.1',
      );
      expect(foreign).toEqual([]);
    });
  },
);
