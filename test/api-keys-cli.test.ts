import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { API_KEYS_COLLECTION, createApiKeyStore } from '../src/auth/api-key-store.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { publishEmbeddedAddress } from '../src/db/embedded-address.ts';
import { connectDatabase } from '../src/db/mongo.ts';
import { type CommandRun, runKeys, spawnKeys } from './support/cli-command.ts';
import { uniqueDbName } from './support/test-server.ts';

const EMBEDDED = !process.env.MONGODB_URI;
const DAY_MS = 86_400_000;
const UNKNOWN_ID = 'key_0000000000000000';

const overUri = (dbName: string) => ({ MONGODB_URI: inject('mongoUri'), MONGODB_DB: dbName });

const directories: string[] = [];
function freshDataDir(): string {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-keys-'));
  directories.push(directory);
  return directory;
}
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** An expected error: said in words on stderr, never as a stack trace. */
function expectCleanFailure(run: CommandRun, code: number, message: string | RegExp): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(/^\s+at /m);
}

describe('npm run keys over MONGODB_URI', () => {
  it('when keys are created, listed and revoked with --json, then each answer is one document with the documented fields', {
    timeout: 60_000,
  }, async () => {
    const env = overUri(uniqueDbName('keys'));
    const created = await runKeys(['create', 'ci', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const ci = JSON.parse(created.stdout);
    expect(Object.keys(ci).sort()).toEqual([
      'allowArbitraryDocuments',
      'createdAt',
      'expiresAt',
      'id',
      'key',
      'name',
      'scopes',
    ]);
    expect(ci).toMatchObject({
      name: 'ci',
      expiresAt: null,
      allowArbitraryDocuments: false,
      // A new key gets what a client needs, never metrics:read.
      scopes: ['pets:read', 'pets:write'],
      id: expect.stringMatching(/^key_[0-9a-f]{16}$/),
    });
    expect(ci.key).toMatch(/^psk_[A-Za-z0-9_-]{43}$/);
    expect(ci.key).toHaveLength(47);

    const nightly = JSON.parse((await runKeys(['create', 'nightly', '--expires', '30', '--json'], env)).stdout);
    expect(Date.parse(nightly.expiresAt) - Date.parse(nightly.createdAt)).toBe(30 * DAY_MS);
    const graphiql = await runKeys(['create', 'graphiql', '--allow-arbitrary-documents', '--json'], env);
    expect(graphiql.code, graphiql.stderr).toBe(0);
    expect(JSON.parse(graphiql.stdout)).toMatchObject({ name: 'graphiql', allowArbitraryDocuments: true });
    // Repeatable, each scope once, in a fixed order whatever order they were asked in.
    const scoped = await runKeys(
      ['create', 'scraper', '--scope', 'metrics:read', '--scope', 'pets:read', '--scope', 'metrics:read', '--json'],
      env,
    );
    expect(scoped.code, scoped.stderr).toBe(0);
    expect(JSON.parse(scoped.stdout)).toMatchObject({ name: 'scraper', scopes: ['pets:read', 'metrics:read'] });
    // A key that expired yesterday: only the store can backdate one.
    const database = await connectDatabase(env.MONGODB_URI, env.MONGODB_DB);
    await createApiKeyStore(database.db).issue({
      name: 'old',
      expiresInDays: 1,
      now: new Date(Date.now() - 2 * DAY_MS),
    });
    // A key issued before scopes existed: its record has no scopes field, and it keeps every scope.
    await database.db.collection(API_KEYS_COLLECTION).insertOne({
      _id: 'key_00000000000000aa' as never,
      name: 'legacy',
      digest: 'f'.repeat(64),
      createdAt: new Date(),
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
    });
    await database.close();

    const listed = await runKeys(['list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain(ci.key);
    expect(listed.stdout).not.toContain(nightly.key);
    const entries = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(Object.keys(entries[0] ?? {}).sort()).toEqual(
      [
        'allowArbitraryDocuments',
        'createdAt',
        'expiresAt',
        'id',
        'lastUsedAt',
        'name',
        'revokedAt',
        'scopes',
        'status',
      ].sort(),
    );
    const everyScope = ['pets:read', 'pets:write', 'metrics:read'];
    expect(
      entries.map(({ name, status, allowArbitraryDocuments, scopes }) => [
        name,
        status,
        allowArbitraryDocuments,
        scopes,
      ]),
    ).toEqual(
      expect.arrayContaining([
        ['ci', 'active', false, ['pets:read', 'pets:write']],
        ['nightly', 'active', false, ['pets:read', 'pets:write']],
        ['graphiql', 'active', true, ['pets:read', 'pets:write']],
        ['scraper', 'active', false, ['pets:read', 'metrics:read']],
        ['old', 'expired', false, ['pets:read', 'pets:write']],
        ['legacy', 'active', false, everyScope],
      ]),
    );
    expect(entries).toHaveLength(6);

    const revoked = await runKeys(['revoke', ci.id, '--json'], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const answer = JSON.parse(revoked.stdout);
    expect(answer).toEqual({ id: ci.id, name: 'ci', revokedAt: expect.any(String), alreadyRevoked: false });
    const again = await runKeys(['revoke', ci.id, '--json'], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ ...answer, alreadyRevoked: true });

    const after = JSON.parse((await runKeys(['list', '--json'], env)).stdout) as { id: string; status: string }[];
    expect(after.find((entry) => entry.id === ci.id)?.status).toBe('revoked');
  });

  it('when an operator creates, lists and revokes a key, then the key is shown once and the list is a table', {
    timeout: 60_000,
  }, async () => {
    const env = overUri(uniqueDbName('keys'));
    expect((await runKeys(['list'], env)).stdout).toBe('No issued keys.\n');

    const created = await runKeys(['create', 'deploy bot', '--expires', '7'], env);
    expect(created.code, created.stderr).toBe(0);
    const key = /psk_\S+/.exec(created.stdout)?.[0];
    const id = /key_[0-9a-f]{16}/.exec(created.stdout)?.[0];
    expect(key).toHaveLength(47);
    expect(created.stdout).toContain('only time the key is shown');
    expect(created.stdout).toContain('SHA-256 digest');
    expect(created.stdout).toContain(`npm run keys -- revoke ${id}`);
    expect(created.stdout).toContain('with the scopes pets:read pets:write.');
    expect(created.stdout).toContain(
      'While the service runs with TRUSTED_DOCUMENTS=enforce, it may run only published',
    );

    const tool = await runKeys(['create', 'internal tool', '--allow-arbitrary-documents', '--scope', 'pets:read'], env);
    expect(tool.code, tool.stderr).toBe(0);
    expect(tool.stdout).toContain('It may send GraphQL documents of its own, even while the service runs with');
    const toolId = /key_[0-9a-f]{16}/.exec(tool.stdout)?.[0];

    const listed = await runKeys(['list'], env);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(2);
    const row = rows.find((line) => line.startsWith(`${id} `));
    expect(header).toMatch(/^ID +NAME +STATUS +SCOPES +DOCUMENTS +CREATED +EXPIRES +LAST USED$/);
    expect(row).toMatch(
      new RegExp(
        `^${id} +deploy bot +active +pets:read,pets:write +published +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC +.+ UTC +never$`,
      ),
    );
    expect(rows.find((line) => line.startsWith(`${toolId} `))).toMatch(
      /^key_\w+ +internal tool +active +pets:read +any +.+ +- +never$/,
    );
    expect(row?.indexOf('active')).toBe(header?.indexOf('STATUS'));
    expect(row?.indexOf('pets:read')).toBe(header?.indexOf('SCOPES'));
    expect(row?.indexOf('published')).toBe(header?.indexOf('DOCUMENTS'));
    expect(row?.indexOf('never')).toBe(header?.indexOf('LAST USED'));
    expect(listed.stdout + listed.stderr).not.toContain(key);

    const revoked = await runKeys(['revoke', id ?? ''], env);
    expect(revoked.stdout).toBe(
      `Revoked ${id} (deploy bot). Running services stop accepting it within 5 s (while they can read the database).\n`,
    );
    const again = await runKeys(['revoke', id ?? ''], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('was already revoked');
  });

  it('when the command line is wrong, then it exits 2 before touching the database, saying why', async () => {
    // An unreachable database: a usage error must be found without it.
    const env = { MONGODB_URI: 'mongodb://127.0.0.1:1/', MONGODB_DB: 'unused' };
    const cases: [string[], RegExp][] = [
      [['frob'], /unknown command "frob"/],
      [['list', '--frob'], /Unknown option '--frob'/],
      [['create'], /create needs a NAME/],
      [['create', ' '], /a key needs a name/],
      [['create', 'x', '--expires', '0'], /whole number of days from 1 to 3650/],
      [['create', 'x', '--expires', '1.5'], /whole number of days/],
      [['create', 'x', '--expires', '3651'], /whole number of days/],
      [['list', '--expires', '3'], /--expires applies to create only/],
      [['revoke', UNKNOWN_ID, '--allow-arbitrary-documents'], /--allow-arbitrary-documents applies to create only/],
      [['create', 'x', '--allow-arbitrary-documents=yes'], /--allow-arbitrary-documents' does not take an argument/],
      [['revoke'], /revoke needs the ID/],
      [
        ['create', 'x', '--scope', 'pets:delete'],
        /unknown scope "pets:delete": use pets:read, pets:write, metrics:read/,
      ],
      [['create', 'x', '--scope', 'pets:read', '--scope', 'admin'], /unknown scope "admin"/],
      [['create', 'x', '--scope'], /argument missing/],
      [['list', '--scope', 'pets:read'], /--scope applies to create only/],
      [['create', 'x', '--scope', `psk_${'a'.repeat(43)}`], /unknown scope \(a key, not repeated here\)/],
      [['revoke', `psk_${'a'.repeat(43)}`], /not the key itself/],
    ];
    // Two at a time: ten npm and node start-ups at once starve the 2-core machine, and other files measure deadlines.
    const twoAtATime = pLimit(2);
    const runs = await Promise.all(
      cases.map(([args, message]) => twoAtATime(async () => ({ run: await runKeys(args, env), message }))),
    );
    for (const { run, message } of runs) expectCleanFailure(run, 2, message);
    expect(runs.at(-1)?.run.stderr).not.toContain('psk_');

    const badConfig = await runKeys(['list'], { MONGODB_DB: 'no spaces allowed' });
    expectCleanFailure(badConfig, 2, /MONGODB_DB: letters, digits/);
    const help = await runKeys(['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run keys -- <command>/);
    expect(help.stdout).toContain('--scope SCOPE');
    expect(help.stdout).toMatch(/Keys issued before\s+scopes existed keep every scope/);
  });

  it('when the id is unknown or the database unreachable, then it exits 1 with one clear line', async () => {
    const [unknown, unreachable] = await Promise.all([
      runKeys(['revoke', UNKNOWN_ID, '--json'], overUri(uniqueDbName('keys'))),
      runKeys(['list', '--json'], { MONGODB_URI: 'mongodb://operator:s3cret@127.0.0.1:1/', MONGODB_DB: 'unused' }),
    ]);
    expectCleanFailure(unknown, 1, `no key has the id ${UNKNOWN_ID}`);
    expectCleanFailure(
      unreachable,
      1,
      /cannot reach the database, MONGODB_URI \(mongodb:\/\/\*\*\*@127\.0\.0\.1:1\/\)/,
    );
    expect(unreachable.stderr).not.toContain('s3cret');
  });
});

describe('npm run keys without MONGODB_URI (the embedded database of DATA_DIR)', () => {
  it.skipIf(!EMBEDDED)(
    'when no service runs on DATA_DIR, then it starts the database itself and leaves nothing behind',
    {
      timeout: 60_000,
    },
    async () => {
      const dataDir = freshDataDir();
      const created = await runKeys(['create', 'local', '--json'], { DATA_DIR: dataDir });
      expect(created.code, created.stderr).toBe(0);
      expect(created.stderr).toContain('starting its embedded database');
      const listed = await runKeys(['list', '--json'], { DATA_DIR: dataDir });
      expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'local', status: 'active' })]);

      expect(existsSync(join(dataDir, '.lock'))).toBe(false);
      expect(existsSync(join(dataDir, '.embedded.json'))).toBe(false);
      expect(spawnSync('pgrep', ['-f', dataDir], { encoding: 'utf8' }).stdout).toBe('');
    },
  );

  it.skipIf(!EMBEDDED)(
    'when a service owns DATA_DIR, then it uses the database that service published',
    {
      timeout: 60_000,
    },
    async () => {
      const dataDir = freshDataDir();
      const running = await startEmbeddedDatabase({ dataDir, log: () => {} });
      try {
        const created = await runKeys(['create', 'beside the service', '--json'], {
          DATA_DIR: dataDir,
          MONGODB_DB: 'petstore',
        });
        expect(created.code, created.stderr).toBe(0);
        expect(created.stderr).toContain(`process ${process.pid}`);
        const database = await connectDatabase(running.uri, 'petstore');
        const names = (await createApiKeyStore(database.db).list()).map((record) => record.name);
        await database.close();
        expect(names).toEqual(['beside the service']);
        // Still the service's: the command neither took over nor released the directory.
        expect(JSON.parse(readFileSync(join(dataDir, '.lock'), 'utf8')).pid).toBe(process.pid);
      } finally {
        await running.stop();
      }
    },
  );

  it('when the owner of DATA_DIR is still starting, then it waits for the address it publishes', async () => {
    const dataDir = freshDataDir();
    // This test process plays a service that has taken the lock and whose database is not ready yet.
    writeFileSync(join(dataDir, '.lock'), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: 'now' }));
    const env = { DATA_DIR: dataDir, MONGODB_DB: uniqueDbName('keys') };
    const listing = spawnKeys(['list', '--json'], env);
    // Published once the command says it waits, as a service does when its database becomes ready.
    listing.child.stderr.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('is starting: waiting for it')) {
        publishEmbeddedAddress(dataDir, { pid: process.pid, kind: 'ferretdb', uri: inject('mongoUri') });
      }
    });
    const listed = await listing.done;
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toContain('is starting: waiting for it');
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });
});
