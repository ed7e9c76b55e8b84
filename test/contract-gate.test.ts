// The contract gate (scripts/contract-gate.ts) against temporary copies of the contracts: a breaking
// change of either one fails and is named, additions pass, the dated planned removals pass only from
// their date. The real schema files are only read. oasdiff is built first when missing (CI builds it in
// its own step); without Go and without a binary the suite is skipped, saying why (a failure in CI).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildOasdiff, oasdiffBinaryPath } from '../scripts/build-oasdiff.ts';
import { CONTRACTS, checkContracts, type GateOptions } from '../scripts/contract-gate.ts';
import { type Requirement, requiring } from './support/required-tools.ts';

const BUILD_DEADLINE_MS = 170_000;
const BEFORE_SUNSET = new Date('2026-11-30T12:00:00Z');
const SUNSET = new Date('2030-12-05T00:00:00Z');

const OASDIFF: Requirement = {
  present: () => existsSync(oasdiffBinaryPath()) || spawnSync('go', ['version']).status === 0,
  missing: 'no Go toolchain to build oasdiff (tools/oasdiff)',
  fix: 'install Go 1.26 (https://go.dev/dl/), or build it elsewhere with npx tsx scripts/build-oasdiff.ts',
};
const needs = requiring(OASDIFF);

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document edited freely
type Document = any;

describe.skipIf(needs.skip)(needs.title('the contract gate (graphql-js and oasdiff)'), () => {
  let oasdiff: string;
  let dir: string;
  let count = 0;

  beforeAll(async () => {
    oasdiff = await buildOasdiff({ timeoutMs: BUILD_DEADLINE_MS, log: (line) => console.log(line) });
    dir = mkdtempSync(join(tmpdir(), 'contract-gate-test-'));
  }, BUILD_DEADLINE_MS + 10_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A copy of the released baseline and current contracts made from it, edited by the caller. */
  function contracts(edit: { graphql?: (sdl: string) => string; openapi?: (document: Document) => void } = {}) {
    const case_ = join(dir, `case-${++count}`);
    cpSync(CONTRACTS.released, join(case_, 'released'), { recursive: true });
    const sdl = readFileSync(join(case_, 'released', 'schema.graphql'), 'utf8');
    const edited = edit.graphql ? edit.graphql(sdl) : sdl;
    if (edit.graphql) expect(edited, 'the edit changed the SDL').not.toBe(sdl);
    const document = parse(readFileSync(join(case_, 'released', 'openapi.json'), 'utf8'));
    edit.openapi?.(document);
    writeFileSync(join(case_, 'schema.graphql'), edited);
    writeFileSync(join(case_, 'openapi.json'), JSON.stringify(document));
    return {
      released: join(case_, 'released'),
      graphql: join(case_, 'schema.graphql'),
      openapi: join(case_, 'openapi.json'),
      oasdiff,
    };
  }

  const gate = (options: Omit<GateOptions, 'today'>, today = BEFORE_SUNSET) => checkContracts({ ...options, today });

  const removePet = {
    graphql: (sdl: string) => sdl.replace(/\n {2}"""The pet with this id[^\n]*\n {2}pet\(id: ID!\)[^\n]*\n/, '\n'),
    openapi: (document: Document) => {
      delete document.paths['/pets/{petId}'];
      // The 201's link names the removed operation; a real removal drops it too.
      delete document.paths['/pets'].post.responses['201'].links;
    },
  };

  it('passes the released contracts unchanged, and today’s committed contracts against them', async () => {
    expect(await gate(contracts())).toEqual({ breaking: [], warnings: [], allowed: [] });
    const today = await gate({ ...CONTRACTS, oasdiff });
    expect(today.breaking).toEqual([]);
  });

  it('fails a removed GraphQL field no query of ours uses, naming it', async () => {
    const removed = contracts({ graphql: (sdl) => sdl.replace(/\n[^\n]*\n {2}hasPreviousPage: Boolean!\n/, '\n') });
    const result = await gate(removed);
    expect(result.breaking).toEqual(['GraphQL FIELD_REMOVED: PageInfo.hasPreviousPage was removed.']);
  });

  it('fails a removed documented error response (404 of getPet, 400 of createPet), naming the operation and status', async () => {
    const result = await gate(
      contracts({
        openapi: (document) => {
          delete document.paths['/pets/{petId}'].get.responses['404'];
          delete document.paths['/pets'].post.responses['400'];
        },
      }),
    );
    expect(result.breaking).toHaveLength(2);
    expect(result.breaking).toContainEqual(
      expect.stringMatching(/^OpenAPI GET \/pets\/\{petId\}: .*`404`.*\[response-non-success-status-removed\]$/),
    );
    expect(result.breaking).toContainEqual(
      expect.stringMatching(/^OpenAPI POST \/pets: .*`400`.*\[response-non-success-status-removed\]$/),
    );
  });

  it('fails a removed response property, a removed enum value and a newly required request property', async () => {
    const result = await gate(
      contracts({
        graphql: (sdl) => sdl.replace('  PENDING\n', ''),
        openapi: (document) => {
          delete document.components.schemas.Pet.properties.status;
          document.components.schemas.NewPet.required.push('status');
        },
      }),
    );
    const text = result.breaking.join('\n');
    expect(text).toContain('GraphQL VALUE_REMOVED_FROM_ENUM: PENDING was removed from enum type PetStatus.');
    expect(text).toMatch(
      /GET \/pets\/\{petId\}: removed the optional property `status`.*\[response-optional-property-removed\]/,
    );
    expect(text).toMatch(/POST \/pets: .*`status`.*required.*\[/);
  });

  it('passes added optional fields, headers and parameters; a new enum value is only a warning', async () => {
    const result = await gate(
      contracts({
        graphql: (sdl) =>
          sdl.replace('type Pet {\n', 'type Pet {\n  nickname: String\n').replace('  SOLD\n', '  SOLD\n  ADOPTED\n'),
        openapi: (document) => {
          // Names no release has: a later release baseline must not turn these additions into changes.
          const ok = document.paths['/pets'].get.responses['200'];
          ok.headers['X-Added-Header'] = { description: 'A new header', schema: { type: 'string' } };
          ok.headers['X-Added-Too'] = { schema: { type: 'string' } };
          document.paths['/pets'].get.parameters.push({
            name: 'X-Added-Parameter',
            in: 'header',
            schema: { type: 'string' },
          });
          document.paths['/pets'].get.responses['202'] = { description: 'A new status' };
          document.components.schemas.Pet.properties.nickname = { type: 'string' };
        },
      }),
    );
    expect(result.breaking).toEqual([]);
    expect(result.warnings).toEqual(['GraphQL VALUE_ADDED_TO_ENUM: ADOPTED was added to enum type PetStatus.']);
  });

  it('fails the planned removals of GET /pets/{petId} and Query.pet before 2030-12-05, and passes them from that date', async () => {
    const removed = contracts(removePet);
    const early = await gate(removed, new Date('2030-12-04T23:59:59Z'));
    expect(early.breaking).toEqual([
      'GraphQL FIELD_REMOVED: Query.pet was removed. (planned for 2030-12-05: not allowed before then)',
      expect.stringMatching(
        /^OpenAPI GET \/pets\/\{petId\}: .*\[api-path-removed-with-deprecation\] \(planned for 2030-12-05/,
      ),
    ]);
    const due = await gate(removed, SUNSET);
    expect(due.breaking).toEqual([]);
    expect(due.allowed).toHaveLength(2);
  });

  it('after the date still fails what the plan does not name: another operation, or a response of the planned one', async () => {
    const result = await gate(
      contracts({
        openapi: (document) => {
          delete document.paths['/pets'].post;
          delete document.paths['/pets/{petId}'].get.responses['404'];
        },
      }),
      new Date('2031-01-01T00:00:00Z'),
    );
    expect(result.allowed).toEqual([]);
    expect(result.breaking.join('\n')).toMatch(/POST \/pets: .*\[api-removed-without-deprecation\]/);
    expect(result.breaking.join('\n')).toMatch(
      /GET \/pets\/\{petId\}: .*`404`.*\[response-non-success-status-removed\]/,
    );
  });

  it('refuses a planned-removals file with a date it cannot read, and an oasdiff that is not built', async () => {
    const bad = contracts();
    const file = join(bad.released, 'planned-removals.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"2030-12-05"', '"5 Dec 2030"'));
    await expect(gate(bad)).rejects.toThrow(/YYYY-MM-DD/);
    await expect(gate({ ...contracts(), oasdiff: join(dir, 'no-oasdiff') })).rejects.toThrow(
      /oasdiff is not built .*npx tsx scripts\/build-oasdiff\.ts/,
    );
  });

  it('as a command: exits 1 printing what broke, honours --date, and --release makes the current contracts the baseline', () => {
    const removed = contracts(removePet);
    const run = (...args: string[]) => {
      const paths = ['--released', removed.released, '--graphql', removed.graphql, '--openapi', removed.openapi];
      return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/contract-gate.ts', ...paths, ...args], {
        encoding: 'utf8',
        timeout: 60_000,
      });
    };
    const failed = run('--date', '2026-12-01');
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('2 breaking change(s)');
    expect(failed.stderr).toContain('Query.pet was removed.');
    expect(run('--date', '2030-12-05').status).toBe(0);
    expect(run('--release').status).toBe(0);
    expect(readFileSync(join(removed.released, 'schema.graphql'), 'utf8')).not.toMatch(/pet\(id: ID!\)/);
    const passed = run('--date', '2026-12-01');
    expect([passed.status, passed.stdout]).toEqual([0, expect.stringContaining('no breaking change')]);
  });
});
