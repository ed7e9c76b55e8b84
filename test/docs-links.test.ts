import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = join(ROOT, 'README.md');

const markdownUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });

/** The text outside fenced code blocks, with each code span's text bare (links in it are not links). */
const prose = (text: string) =>
  text
    .replace(/^[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?^[ \t]*\1[^\n]*$/gm, '')
    .replace(/`+([^`\n]*?)`+/g, (_, code) => code.replace(/[[\]()]/g, ''));

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingSlugs(text: string): Set<string> {
  const slugs = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (heading ?? '')
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let slug = base;
    for (let n = 1; slugs.has(slug); n++) slug = `${base}-${n}`;
    slugs.add(slug);
  }
  return slugs;
}

/** Every relative link or image of a markdown file that does not resolve, with why. */
function brokenLinks(file: string, text: string) {
  const targets = [
    ...[...prose(text).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((found) => found[1]),
    ...[...prose(text).matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((found) => found[1]),
  ];
  const problems: string[] = [];
  for (const target of targets) {
    if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http(s), mailto: not fetched
    const [pathPart = '', anchor] = target.split('#');
    const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
    const where = `${relative(ROOT, file)}: ${target}`;
    if (path !== file && (relative(ROOT, path).startsWith('..') || !existsSync(path))) {
      problems.push(`${where}: no such file`);
    } else if (anchor !== undefined && !path.endsWith('.md')) {
      problems.push(`${where}: an anchor into something that is not a markdown file`);
    } else if (anchor !== undefined && !headingSlugs(path === file ? text : readFileSync(path, 'utf8')).has(anchor)) {
      problems.push(`${where}: no heading with that anchor`);
    }
  }
  return problems;
}

describe('documentation links', () => {
  const files = [README, ...markdownUnder(join(ROOT, 'docs'))];

  it('resolve inside the repository: every relative link, image and #anchor of the README and docs/', () => {
    expect(files.length).toBeGreaterThan(5);
    const problems = files.flatMap((file) => brokenLinks(file, readFileSync(file, 'utf8')));
    expect(problems).toEqual([]);
  });

  it('are caught when broken: a missing file, a missing anchor, an anchor into a folder, a path out of the repository', () => {
    const file = join(ROOT, 'docs', 'example.md');
    const text = [
      '# A page',
      '## Retries with `Idempotency-Key`',
      '[ok](#retries-with-idempotency-key) [ok](api.md#limits) [ok](../README.md) ![ok](decisions/)',
      '[external](https://example.com/nowhere) `[in code](nowhere.md)`',
      '```md',
      '[in a fence](nowhere.md)',
      '```',
      '[gone](nowhere.md) [bad anchor](api.md#no-such-heading) [self](#no-such-heading)',
      '[folder anchor](decisions/#x) [outside](../../etc/passwd)',
    ].join('\n');
    expect(brokenLinks(file, text)).toEqual([
      'docs/example.md: nowhere.md: no such file',
      'docs/example.md: api.md#no-such-heading: no heading with that anchor',
      'docs/example.md: #no-such-heading: no heading with that anchor',
      'docs/example.md: decisions/#x: an anchor into something that is not a markdown file',
      'docs/example.md: ../../etc/passwd: no such file',
    ]);
  });

  it('slug headings as GitHub does, numbering repeats', () => {
    const slugs = headingSlugs("# The access log's share\n## Node 20 & 24\n## Node 20 & 24\n### `MAX_BODY_BYTES`");
    expect([...slugs]).toEqual(['the-access-logs-share', 'node-20--24', 'node-20--24-1', 'max_body_bytes']);
  });
});

describe('README', () => {
  const lines = readFileSync(README, 'utf8').split('\n');

  it('is a front page of at most 250 lines', () => {
    expect(lines.length).toBeLessThanOrEqual(250);
  });

  it('shows both set-up commands on its first screen', () => {
    const firstScreen = lines.slice(0, 40);
    expect(firstScreen).toContain('npm ci && npm start');
    expect(firstScreen).toContain('npm ci && npm test');
  });
});
