import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { connectDatabase } from '../src/db/mongo.ts';
import { checkManifest } from '../src/documents/manifest.ts';
import { PERSISTED_DOCUMENTS_COLLECTION } from '../src/documents/published-documents.ts';
import { schema } from '../src/graphql/schema/index.ts';
import { type CommandRun, runDocuments } from './support/cli-command.ts';
import { uniqueDbName } from './support/test-server.ts';

const LIST_PETS = 'query ListPets($status: PetStatus) { pets(status: $status) { id name status } }';
// Codegen prints documents on several lines: the id is the hash of exactly these bytes.
const CREATE_PET = 'mutation CreatePet($input: NewPet!) {\n  createPet(input: $input) {\n    id\n    name\n  }\n}';
const PET_BY_ID = 'query PetById($id: ID!) { pet(id: $id) { id name categoryId } }';
const FIRST_PET = '{ pets(limit: 1) { id } }';
const UNKNOWN_FIELD = 'query PetColours { pets { id colour } }';

const hexOf = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const idOf = (text: string) => `sha256:${hexOf(text)}`;

const overUri = (dbName: string) => ({ MONGODB_URI: inject('mongoUri'), MONGODB_DB: dbName });
const freshEnv = () => overUri(uniqueDbName('documents'));

const directories: string[] = [];
function freshDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-documents-'));
  directories.push(directory);
  return directory;
}
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** Writes a manifest (JSON, or the text as it is) into a fresh directory; returns its path. */
function manifestFile(content: unknown, name = 'persisted-documents.json'): string {
  const path = join(freshDirectory(), name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

/** GraphQL Codegen's client preset writes `{"sha256:<hex>": "<document>"}`. */
const codegenManifest = (...texts: string[]) => Object.fromEntries(texts.map((text) => [idOf(text), text]));

const apolloManifest = (operations: { name: string; type: string; body: string }[]) => ({
  format: 'apollo-persisted-query-manifest',
  version: 1,
  operations: operations.map((operation) => ({ id: hexOf(operation.body), ...operation })),
});

async function storedDocuments(env: { MONGODB_URI: string; MONGODB_DB: string }) {
  const database = await connectDatabase(env.MONGODB_URI, env.MONGODB_DB);
  try {
    return await database.db.collection(PERSISTED_DOCUMENTS_COLLECTION).find({}).toArray();
  } finally {
    await database.close();
  }
}

/** An expected error: said in words on stderr, never as a stack trace. */
function expectCleanFailure(run: CommandRun, code: number, message: string | RegExp): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(/^\s+at /m);
}

describe('npm run documents', () => {
  it('when a Codegen persisted-documents.json is published, then list shows its documents and a second publish changes nothing', {
    timeout: 90_000,
  }, async () => {
    const env = freshEnv();
    expect((await runDocuments(['list'], env)).stdout).toBe('No published documents.\n');
    const file = manifestFile(codegenManifest(LIST_PETS, CREATE_PET, FIRST_PET));

    // Run where the file is, by a relative path: npm itself runs the script in the project's directory.
    const published = await runDocuments(['publish', 'persisted-documents.json'], env, { cwd: join(file, '..') });
    expect(published.code, published.stderr).toBe(0);
    const [summary, blank, header, ...rows] = published.stdout.trimEnd().split('\n');
    expect(summary).toBe('Published 3 documents (3 new, 0 already published) from persisted-documents.json.');
    expect(blank).toBe('');
    expect(header).toMatch(/^ID +STATUS +OPERATIONS$/);
    expect(rows.slice(0, 3)).toEqual([
      expect.stringMatching(new RegExp(`^${idOf(LIST_PETS)} +new +query ListPets$`)),
      expect.stringMatching(new RegExp(`^${idOf(CREATE_PET)} +new +mutation CreatePet$`)),
      expect.stringMatching(new RegExp(`^${idOf(FIRST_PET)} +new +query \\(anonymous\\)$`)),
    ]);
    expect(rows.at(-1)).toBe('Running services serve the new ones within 5 s (while they can read the database).');

    const listed = await runDocuments(['list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const [listHeader, ...listRows] = listed.stdout.trimEnd().split('\n');
    expect(listHeader).toMatch(/^ID +PUBLISHED +OPERATIONS$/);
    expect(listRows).toHaveLength(3);
    for (const [text, operation] of [
      [LIST_PETS, 'query ListPets'],
      [CREATE_PET, 'mutation CreatePet'],
      [FIRST_PET, 'query \\(anonymous\\)'],
    ] as const) {
      const date = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC';
      expect(listRows).toContainEqual(expect.stringMatching(new RegExp(`^${idOf(text)} +${date} +${operation}$`)));
    }
    expect(listed.stdout).not.toContain('createPet(input');

    const listedJson = JSON.parse((await runDocuments(['list', '--json'], env)).stdout);
    expect(listedJson).toHaveLength(3);
    expect(listedJson).toContainEqual({
      id: idOf(CREATE_PET),
      operations: [{ name: 'CreatePet', type: 'mutation' }],
      publishedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      document: CREATE_PET,
    });
    expect(listedJson).toContainEqual(expect.objectContaining({ operations: [{ name: null, type: 'query' }] }));

    const stored = await storedDocuments(env);
    expect(stored.map((record) => [record._id, record.document]).sort()).toEqual(
      [LIST_PETS, CREATE_PET, FIRST_PET].map((text) => [idOf(text), text]).sort(),
    );

    const again = await runDocuments(['publish', file, '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    const answer = JSON.parse(again.stdout);
    expect(answer).toEqual({ published: [], alreadyPublished: expect.any(Array) });
    expect(answer.alreadyPublished.sort()).toEqual([LIST_PETS, CREATE_PET, FIRST_PET].map(idOf).sort());
    const againText = await runDocuments(['publish', file], env);
    expect(againText.stdout).toContain('(0 new, 3 already published)');
    expect(againText.stdout).toContain('Nothing changed: every document was published already.');
    expect(againText.stdout).toMatch(new RegExp(`^${idOf(LIST_PETS)} +already published +query ListPets$`, 'm'));
    expect(await storedDocuments(env)).toHaveLength(3);
  });

  it('when an Apollo persisted query manifest is published, then its operations are listed with their types', {
    timeout: 60_000,
  }, async () => {
    const env = freshEnv();
    const file = manifestFile(
      apolloManifest([
        { name: 'PetById', type: 'query', body: PET_BY_ID },
        { name: 'CreatePet', type: 'mutation', body: CREATE_PET },
      ]),
      'persisted-query-manifest.json',
    );
    const published = await runDocuments(['publish', file, '--json'], env);
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toEqual({
      published: [idOf(PET_BY_ID), idOf(CREATE_PET)],
      alreadyPublished: [],
    });
    const listed = JSON.parse((await runDocuments(['list', '--json'], env)).stdout) as { id: string }[];
    expect(listed.find((entry) => entry.id === idOf(PET_BY_ID))).toMatchObject({
      operations: [{ name: 'PetById', type: 'query' }],
      document: PET_BY_ID,
    });
  });

  it('when one document of a file does not validate against the schema, then the whole file is refused, naming it, and nothing is stored', {
    timeout: 60_000,
  }, async () => {
    const env = freshEnv();
    const file = manifestFile(codegenManifest(LIST_PETS, UNKNOWN_FIELD, CREATE_PET));
    const refused = await runDocuments(['publish', file], env);
    expectCleanFailure(
      refused,
      1,
      `documents: ${file} was not published, nothing was stored: 1 of 3 documents are refused`,
    );
    expect(refused.stderr).toContain(
      `  ${idOf(UNKNOWN_FIELD)} (PetColours): Cannot query field "colour" on type "Pet". (line 1, column 30)`,
    );
    expect(refused.stderr).not.toContain(idOf(LIST_PETS));
    expect(await storedDocuments(env)).toEqual([]);
  });

  it('when an id is not the SHA-256 of its text, then the file is refused, naming that document, and nothing is stored', {
    timeout: 60_000,
  }, async () => {
    const env = freshEnv();
    // Reformatted after the build: the text no longer hashes to its id.
    const edited = { ...codegenManifest(LIST_PETS), [idOf(PET_BY_ID)]: `${PET_BY_ID}\n` };
    const refused = await runDocuments(['publish', manifestFile(edited)], env);
    expectCleanFailure(refused, 1, /1 of 2 documents are refused/);
    expect(refused.stderr).toContain(
      `  ${idOf(PET_BY_ID)} (PetById): is not the SHA-256 of its text, which is ${idOf(`${PET_BY_ID}\n`)}`,
    );
    expect(await storedDocuments(env)).toEqual([]);
  });

  it('when FILE is missing, not JSON, neither format or empty, then it exits 1 saying so', {
    timeout: 60_000,
  }, async () => {
    const env = freshEnv();
    const cases: [string, RegExp][] = [
      [join(freshDirectory(), 'missing.json'), /cannot read .*missing\.json: ENOENT/],
      [manifestFile('query ListPets { pets { id } }'), /was not published: not JSON/],
      [manifestFile({ name: 'petstore', version: 1 }), /was not published: neither a GraphQL Codegen .* nor an Apollo/],
      [manifestFile([LIST_PETS]), /was not published: neither a GraphQL Codegen/],
      [manifestFile({ format: 'relay', operations: [] }), /unknown format "relay"/],
      [manifestFile({}), /was not published: holds no documents/],
      [manifestFile(apolloManifest([])), /was not published: holds no documents/],
    ];
    const twoAtATime = pLimit(2);
    const runs = await Promise.all(
      cases.map(([file, message]) =>
        twoAtATime(async () => ({ run: await runDocuments(['publish', file], env), message })),
      ),
    );
    for (const { run, message } of runs) expectCleanFailure(run, 1, message);
    expect(await storedDocuments(env)).toEqual([]);
  });

  it('when a document is removed, then it is gone, and removing it again exits 1', { timeout: 60_000 }, async () => {
    const env = freshEnv();
    await runDocuments(['publish', manifestFile(codegenManifest(LIST_PETS, PET_BY_ID))], env);

    const removed = await runDocuments(['remove', idOf(LIST_PETS)], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(
      `Removed ${idOf(LIST_PETS)}. Running services stop accepting it within 5 s (while they can read the database).\n`,
    );
    expect((await storedDocuments(env)).map((record) => record._id)).toEqual([idOf(PET_BY_ID)]);
    const again = await runDocuments(['remove', idOf(LIST_PETS)], env);
    expectCleanFailure(again, 1, `documents: no published document has the id ${idOf(LIST_PETS)}`);

    // The bare hex, in capitals even, names the same document.
    const bare = await runDocuments(['remove', hexOf(PET_BY_ID).toUpperCase(), '--json'], env);
    expect(bare.code, bare.stderr).toBe(0);
    expect(JSON.parse(bare.stdout)).toEqual({ id: idOf(PET_BY_ID), removed: true });
    expect((await runDocuments(['list'], env)).stdout).toBe('No published documents.\n');
  });

  it('when the command line is wrong, then it exits 2 before touching the database, saying why', {
    timeout: 60_000,
  }, async () => {
    // An unreachable database: a usage error must be found without it.
    const env = { MONGODB_URI: 'mongodb://127.0.0.1:1/', MONGODB_DB: 'unused' };
    const cases: [string[], RegExp][] = [
      [['frob'], /documents: unknown command "frob": use publish, list or remove/],
      [['list', '--frob'], /Unknown option '--frob'/],
      [['list', 'everything'], /list takes no arguments/],
      [['publish'], /publish needs a FILE/],
      [['publish', 'a.json', 'b.json'], /publish takes only a FILE/],
      [['remove'], /remove needs the ID of a document/],
      [['remove', 'sha256:abc'], /remove takes a document id, sha256:<64 hex digits> or the 64 hex digits/],
      [['publish', 'x.json', '--expires', '3'], /Unknown option '--expires'/],
    ];
    const twoAtATime = pLimit(2);
    const runs = await Promise.all(
      cases.map(([args, message]) => twoAtATime(async () => ({ run: await runDocuments(args, env), message }))),
    );
    for (const { run, message } of runs) {
      expectCleanFailure(run, 2, message);
      expect(run.stderr).toContain('Run npm run documents -- --help for the usage.');
    }
    const help = await runDocuments(['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run documents -- <command>/);
  });
});

describe('checkManifest', () => {
  it('when codegen hashed with SHA-1, then the ids are refused, saying so', () => {
    const sha1 = createHash('sha1').update(LIST_PETS).digest('hex');
    const checked = checkManifest(JSON.stringify({ [sha1]: LIST_PETS }), schema);
    expect(checked).toEqual({
      ok: false,
      problem: '1 of 1 documents are refused',
      refused: [{ id: `"${sha1}"`, name: null, reason: expect.stringMatching(/^is a SHA-1 hash, not a SHA-256/) }],
    });
  });

  it('when a document cannot run (invalid, fragments only, syntax error), then it is refused with the reason', () => {
    const texts = [
      'subscription Watch { pets { id } }',
      'fragment PetFields on Pet { id }',
      'query Broken { pets { id }',
    ];
    const checked = checkManifest(JSON.stringify(codegenManifest(...texts)), schema);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.refused).toEqual([
      {
        id: idOf(texts[0] ?? ''),
        name: 'Watch',
        reason: expect.stringMatching(/^Cannot query field "pets" on type "Subscription"/),
      },
      { id: idOf(texts[1] ?? ''), name: null, reason: 'holds no operation' },
      { id: idOf(texts[2] ?? ''), name: null, reason: 'Syntax Error: Expected Name, found <EOF>. (line 1, column 27)' },
    ]);
  });

  it('when one document is listed under its bare and its prefixed id, then it is published once', () => {
    const checked = checkManifest(
      JSON.stringify({ [hexOf(LIST_PETS)]: LIST_PETS, [idOf(LIST_PETS)]: LIST_PETS }),
      schema,
    );
    expect(checked).toEqual({
      ok: true,
      format: 'codegen',
      documents: [{ id: idOf(LIST_PETS), document: LIST_PETS, operations: [{ name: 'ListPets', type: 'query' }] }],
    });
  });

  it('when an Apollo manifest has another version or no operations array, then it is refused', () => {
    const check = (manifest: unknown) => checkManifest(JSON.stringify(manifest), schema);
    expect(check({ ...apolloManifest([]), version: 2 })).toMatchObject({
      problem: expect.stringMatching(/version 2 is not supported/),
    });
    expect(check({ format: 'apollo-persisted-query-manifest', version: 1 })).toMatchObject({
      problem: expect.stringMatching(/needs an "operations" array/),
    });
  });
});
