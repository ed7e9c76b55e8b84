/** Headless Chromium for the tests that drive the service's pages as a user would. */
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { CHROMIUM, requiring } from './required-tools.ts';

const needs = requiring(CHROMIUM);
// Locally a missing browser is a skip; in CI it must fail, so the check can't silently vanish.
export const SKIP_BROWSER = needs.skip;

/** The title of a browser suite, saying why when it is skipped. */
export function browserSuite(title: string): string {
  return needs.title(`${title} in headless Chromium`);
}

/** Chromium for a describe block: launched in beforeAll, closed in afterAll; call the result in tests. */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM.path,
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
  });
  return () => {
    if (!browser) throw new Error('the browser starts in beforeAll: use it inside tests');
    return browser;
  };
}

/** The viewport of the pages' screenshots: a laptop's first screen. */
export const FIRST_SCREEN = { width: 1280, height: 720 };

/** A new page whose uncaught errors are collected in `pageErrors`, from before anything loads. */
export async function watchedPage(
  browser: Browser,
  viewport: { width: number; height: number } = FIRST_SCREEN,
): Promise<{ page: Page; pageErrors: string[] }> {
  const page = await browser.newPage({ viewport });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return { page, pageErrors };
}

/** Writes a full-size screenshot to test-artifacts/ for a human to look at, and checks it was written. */
export async function saveScreenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  const path = fileURLToPath(new URL(`../../test-artifacts/${name}`, import.meta.url));
  mkdirSync(dirname(path), { recursive: true });
  await page.screenshot({ path, ...options });
  expect(statSync(path).size).toBeGreaterThan(0);
}
