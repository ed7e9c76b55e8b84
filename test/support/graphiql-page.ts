// Driving GraphiQL's page in Chromium: its Monaco editors, the Headers tab, and a document made ready to run.
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';

/** Monaco renders with non-breaking spaces; normalise so assertions read naturally. */
export async function editorText(editor: Locator): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText keeps Monaco's line breaks; textContent drops them.
  return (await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');
}

/** Replaces a Monaco editor's content: clear first, then insertText (typing would trigger auto-closing). */
export async function replaceEditorText(page: Page, editor: Locator, text: string): Promise<void> {
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await expect.poll(() => editorText(editor)).toBe('');
  await page.keyboard.insertText(text);
  await page.keyboard.press('Home'); // Scroll back to the line start so a screenshot shows it all.
  await expect.poll(() => editorText(editor)).toBe(text);
}

/** The query editor, once GraphiQL has rendered it. */
export async function queryEditorOf(page: Page): Promise<Locator> {
  const queryEditor = page.locator('section.graphiql-query-editor .monaco-editor');
  await expect.poll(() => queryEditor.isVisible(), { timeout: 20_000 }).toBe(true);
  return queryEditor;
}

/** Opens the Headers tab and returns its editor. */
export async function headersEditorOf(page: Page): Promise<Locator> {
  await page.locator('.graphiql-editor-tools button[data-name="headers"]').click();
  return page.locator('.monaco-editor[data-uri$="request-headers.json"]');
}

/** Puts `document` (one operation) in the query editor and waits until GraphiQL has parsed it. */
export async function setDocument(page: Page, queryEditor: Locator, document: string): Promise<void> {
  await replaceEditorText(page, queryEditor, document);
  // GraphiQL re-parses the editor after a debounce; until the tab is renamed it still holds the
  // two-operation default, and Execute would open the "which operation?" menu instead of running.
  const tabTitle = page.locator('.graphiql-tab-active .graphiql-tab-button');
  await expect.poll(() => tabTitle.getAttribute('title')).toBe('<untitled>');
}

/** GraphiQL's run button: "Execute query" at rest, "Stop query" while a subscription runs. */
export const executeButtonOf = (page: Page): Locator => page.locator('button.graphiql-execute-button');

/** Where GraphiQL shows the result. */
export const resultOf = (page: Page): Locator => page.locator('section.result-window');
