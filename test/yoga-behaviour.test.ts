import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MIRRORED_VERSIONS } from '../src/graphql-http/yoga-behaviour.ts';

// src/graphql-http/yoga-behaviour.ts copies rules from these packages, checked against the versions it names.
// An upgrade fails here until someone has re-checked each rule against the new source (each names
// the file it mirrors) and test/graphql-fast-path.test.ts passes, then updated MIRRORED_VERSIONS.

const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;

describe('the packages whose behaviour the edge and the fast path copy', () => {
  it.each(Object.entries(MIRRORED_VERSIONS))(
    '%s is installed at the version the copy was checked against',
    (name, version) => {
      expect(installedVersion(name)).toBe(version);
    },
  );

  it('are pinned exactly in package.json where they are direct dependencies', () => {
    const { dependencies } = JSON.parse(readFileSync('package.json', 'utf8')) as {
      dependencies: Record<string, string>;
    };
    for (const [name, version] of Object.entries(MIRRORED_VERSIONS)) {
      if (name in dependencies) expect(dependencies[name]).toBe(version);
    }
    expect(dependencies['graphql-yoga']).toBe(MIRRORED_VERSIONS['graphql-yoga']);
  });
});
