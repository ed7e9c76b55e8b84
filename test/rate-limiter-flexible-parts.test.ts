import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const SRC = new URL('../src/', import.meta.url).pathname;

/** Every `rate-limiter-flexible/lib/X.js` that src/ imports, found in the sources themselves. */
function deepImports(): string[] {
  const found = new Set<string>();
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        for (const [, name] of readFileSync(path, 'utf8').matchAll(/'rate-limiter-flexible\/lib\/(\w+)\.js'/g)) {
          found.add(name as string);
        }
      }
    }
  };
  walk(SRC);
  return [...found].sort();
}

// The edge imports rate-limiter-flexible's files one by one, as its README's "Import" section offers,
// so the index's every store is never loaded. An upgrade that moves or changes them fails here.
describe("rate-limiter-flexible's files the edge imports directly", () => {
  const index = require('rate-limiter-flexible') as Record<string, unknown>;

  it('are found in src/ (the memory counter and the burst limiter at least)', () => {
    expect(deepImports()).toEqual(expect.arrayContaining(['BurstyRateLimiter', 'RateLimiterMemory', 'RateLimiterRes']));
  });

  it.each(deepImports())('lib/%s.js exists and exports what the package index exports under that name', (name) => {
    const part = require(`rate-limiter-flexible/lib/${name}.js`) as unknown;
    expect(typeof part).toBe('function');
    expect(part).toBe(index[name]);
  });

  it('come from the exact version package.json pins', () => {
    const pinned = (require('../package.json') as { dependencies: Record<string, string> }).dependencies[
      'rate-limiter-flexible'
    ];
    const installed = (require('rate-limiter-flexible/package.json') as { version: string }).version;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(installed).toBe(pinned);
  });
});
