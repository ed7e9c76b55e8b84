import pLimit from 'p-limit';
import { describe, expect, inject, it } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { connectDatabase, type Database } from '../src/db/mongo.ts';
import { encodeCursor } from '../src/pets/cursor.ts';
import { PETS_COLLECTION } from '../src/pets/pet-document.ts';
import {
  createWebhookStore,
  type DeliveryAttempt,
  WEBHOOK_DELIVERIES_COLLECTION,
} from '../src/webhooks/webhook-store.ts';
import { type CommandRun, runKeys, runWebhooks } from './support/cli-command.ts';
import { uniqueDbName } from './support/test-server.ts';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const UNKNOWN_ID = 'whe_0000000000000000';
const PASTED_SECRET = `whsec_${'A'.repeat(43)}=`;
const PASTED_KEY = `psk_${'a'.repeat(43)}`;
const DAY_MS = 86_400_000;
/** Receivers on loopback: only with the setting tests and intranets use. */
const ALLOW_PRIVATE = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };

const overUri = (dbName: string) => ({ MONGODB_URI: inject('mongoUri'), MONGODB_DB: dbName });

/** An expected error: said in words on stderr, never as a stack trace. */
function expectCleanFailure(run: CommandRun, code: number, message: string | RegExp): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(/^\s+at /m);
}

async function succeeded(running: Promise<CommandRun>): Promise<string> {
  const run = await running;
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

/** A database with pets 1 to `pets` stored, and an issued key with `scopes`. */
async function setUp(pets: number, scopes = ['pets:read']) {
  const env = overUri(uniqueDbName('webhooks'));
  const database = await connectDatabase(env.MONGODB_URI, env.MONGODB_DB);
  if (pets > 0) {
    const documents = Array.from({ length: pets }, (_, i) => ({ _id: i + 1, name: `pet ${i + 1}`, categoryId: 1 }));
    await database.db.collection<{ _id: number }>(PETS_COLLECTION).insertMany(documents);
  }
  const scopeArgs = scopes.flatMap((scope) => ['--scope', scope]);
  const key = JSON.parse(await succeeded(runKeys(['create', 'receiver', ...scopeArgs, '--json'], env)));
  return { env, database, keyId: key.id as string };
}

async function closing<T>(database: Database, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    await database.close();
  }
}

describe('npm run webhooks', () => {
  it('when an endpoint is added, rotated, disabled, rewound and removed with --json, then each answer is one document and the store follows', {
    timeout: 90_000,
  }, async () => {
    const { env, database, keyId } = await setUp(7);
    const store = createWebhookStore(database.db);
    await closing(database, async () => {
      const allowed = { ...env, ...ALLOW_PRIVATE };
      const args = ['add', 'http://localhost:1/hooks', '--key', keyId, '--status', 'available', '--json'];
      const added = JSON.parse(await succeeded(runWebhooks(args, allowed)));
      expect(Object.keys(added).sort()).toEqual(
        [
          'createdAt',
          'cursor',
          'id',
          'keyId',
          'overlapEndsAt',
          'position',
          'secret',
          'secrets',
          'state',
          'stateReason',
          'status',
          'url',
        ].sort(),
      );
      // From the newest pet on: the endpoint gets the pets created after it was added.
      expect(added).toMatchObject({
        id: expect.stringMatching(/^whe_[0-9a-f]{16}$/),
        url: 'http://localhost:1/hooks',
        keyId,
        status: 'available',
        state: 'active',
        stateReason: null,
        position: 7,
        cursor: encodeCursor(7),
        secrets: 1,
      });
      expect(added.secret).toMatch(SECRET);
      expect((await store.get(added.id))?.secrets).toEqual([{ secret: added.secret, expiresAt: null }]);

      for (const listing of [['list'], ['list', '--json']]) {
        expect(await succeeded(runWebhooks(listing, env))).not.toContain(added.secret);
      }
      const [listed] = JSON.parse(await succeeded(runWebhooks(['list', '--json'], env)));
      const { secret: _shownOnce, ...withoutSecret } = added;
      expect(listed).toEqual(withoutSecret);

      const rotating = await succeeded(runWebhooks(['rotate-secret', added.id, '--overlap', '60s', '--json'], env));
      const rotated = JSON.parse(rotating);
      expect(rotated.secret).toMatch(SECRET);
      expect(rotated.secret).not.toBe(added.secret);
      expect(rotated).toMatchObject({ id: added.id, secrets: 2, overlapEndsAt: expect.any(String) });
      const [current, old] = (await store.get(added.id))?.secrets ?? [];
      expect(current).toEqual({ secret: rotated.secret, expiresAt: null });
      expect(old?.secret).toBe(added.secret);
      expect(Math.abs((old?.expiresAt?.getTime() ?? 0) - (Date.now() + 60_000))).toBeLessThan(10_000);
      const listedAfter = await succeeded(runWebhooks(['list', '--json'], env));
      expect(listedAfter).not.toContain(rotated.secret);
      expect(listedAfter).not.toContain(added.secret);
      expect(JSON.parse(listedAfter)[0]).toMatchObject({ secrets: 2, overlapEndsAt: rotated.overlapEndsAt });

      const dropped = JSON.parse(
        await succeeded(runWebhooks(['rotate-secret', added.id, '--overlap', '0s', '--json'], env)),
      );
      expect((await store.get(added.id))?.secrets).toEqual([{ secret: dropped.secret, expiresAt: null }]);
      expect(dropped).toMatchObject({ secrets: 1, overlapEndsAt: null });

      const disabled = JSON.parse(await succeeded(runWebhooks(['disable', added.id, '--json'], env)));
      expect(disabled).toMatchObject({
        state: 'disabled',
        stateReason: 'disabled by an operator',
        previousState: 'active',
      });
      expect(disabled).not.toHaveProperty('secret');
      expect(await store.get(added.id)).toMatchObject({ state: 'disabled', stateReason: 'disabled by an operator' });
      const enabled = JSON.parse(await succeeded(runWebhooks(['enable', added.id, '--json'], env)));
      expect(enabled).toMatchObject({ state: 'active', stateReason: null, previousState: 'disabled', position: 7 });

      // Active again whatever the state was, from after the cursor's pet.
      await store.disable(added.id);
      const since = encodeCursor(5);
      const rewound = JSON.parse(
        await succeeded(runWebhooks(['redeliver', added.id, '--since', since, '--json'], env)),
      );
      expect(rewound).toMatchObject({ state: 'active', position: 5, cursor: since });
      expect(await store.get(added.id)).toMatchObject({ state: 'active', stateReason: null, position: 5 });

      const removed = JSON.parse(await succeeded(runWebhooks(['remove', added.id, '--json'], env)));
      expect(removed).toEqual({ id: added.id, url: added.url, removed: true });
      expect(await store.get(added.id)).toBeNull();
      expect(JSON.parse(await succeeded(runWebhooks(['list', '--json'], env)))).toEqual([]);
    });
  });

  it('when attempts were recorded, then deliveries lists them newest first, as many as asked, and remove deletes them', {
    timeout: 60_000,
  }, async () => {
    const { env, database, keyId } = await setUp(0);
    const store = createWebhookStore(database.db);
    await closing(database, async () => {
      const endpoint = await store.add({ url: 'https://1.1.1.1/hooks', keyId, status: null, position: 0 });
      const attempt = (n: number, outcome: DeliveryAttempt['outcome']): DeliveryAttempt => ({
        endpointId: endpoint.id,
        webhookId: `msg_${endpoint.id.slice(4)}_3`,
        petId: 3,
        attempt: n,
        at: new Date(Date.UTC(2026, 0, 1, 12, 0, n * 5)),
        status: outcome === 'delivered' ? 204 : null,
        latencyMs: 10 * n,
        error: outcome === 'delivered' ? null : 'connect ECONNREFUSED',
        outcome,
      });
      for (const [n, outcome] of [
        [1, 'retrying'],
        [2, 'retrying'],
        [3, 'delivered'],
      ] as const) {
        await store.record(attempt(n, outcome));
      }
      const all = JSON.parse(await succeeded(runWebhooks(['deliveries', endpoint.id, '--json'], env)));
      expect(all).toEqual(
        [3, 2, 1].map((n) => ({ ...attempt(n, n === 3 ? 'delivered' : 'retrying'), at: expect.any(String) })),
      );
      expect(all.map((entry: { at: string }) => entry.at)).toEqual([
        '2026-01-01T12:00:15.000Z',
        '2026-01-01T12:00:10.000Z',
        '2026-01-01T12:00:05.000Z',
      ]);
      const two = JSON.parse(await succeeded(runWebhooks(['deliveries', endpoint.id, '--limit', '2', '--json'], env)));
      expect(two.map((entry: { attempt: number }) => entry.attempt)).toEqual([3, 2]);

      const [header, newest] = (await succeeded(runWebhooks(['deliveries', endpoint.id], env))).split('\n');
      expect(header).toMatch(/^TIME +WEBHOOK-ID +PET +ATTEMPT +STATUS +LATENCY MS +OUTCOME +ERROR$/);
      expect(newest).toMatch(/^2026-01-01 12:00:15 UTC +msg_\w+_3 +3 +3 +204 +30 +delivered +-$/);

      expect(await succeeded(runWebhooks(['remove', endpoint.id], env))).toContain('and its delivery log');
      expect(await database.db.collection(WEBHOOK_DELIVERIES_COLLECTION).countDocuments({})).toBe(0);
      expectCleanFailure(await runWebhooks(['deliveries', endpoint.id], env), 1, `the id ${endpoint.id}`);
    });
  });

  it('when an operator works in text, then the secret is shown once with its warning and every change says when it acts', {
    timeout: 60_000,
  }, async () => {
    const { env, database, keyId } = await setUp(2);
    await database.close();
    expect(await succeeded(runWebhooks(['list'], env))).toBe('No webhook endpoints.\n');
    // A public address needs no setting.
    const added = await succeeded(runWebhooks(['add', 'https://1.1.1.1/hooks', '--key', keyId], env));
    const secret = /whsec_\S+/.exec(added)?.[0] ?? '';
    const id = /whe_[0-9a-f]{16}/.exec(added)?.[0] ?? '';
    expect(secret).toMatch(SECRET);
    expect(added).toContain(`on behalf of key ${keyId} (receiver)`);
    expect(added).toContain(`after pet 2 (cursor ${encodeCursor(2)})`);
    expect(added).toContain('only time the signing secret is shown');
    expect(added).toContain('within 2 s');

    const [header, row, ...more] = (await succeeded(runWebhooks(['list'], env))).trimEnd().split('\n');
    expect(more).toEqual([]);
    expect(header).toMatch(/^ID +URL +KEY +STATUS +STATE +AFTER +SECRETS +CREATED +REASON$/);
    expect(row).toMatch(
      new RegExp(`^${id} +https://1\\.1\\.1\\.1/hooks +${keyId} +any +active +${encodeCursor(2)} +1 +.+ UTC +-$`),
    );

    const rotated = await succeeded(runWebhooks(['rotate-secret', id, '--overlap', '2h'], env));
    expect(rotated).toMatch(/signed with both the new and the old secret until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(rotated).not.toContain(secret);
    expect(/whsec_\S+/.exec(rotated)?.[0]).toMatch(SECRET);
    expect(await succeeded(runWebhooks(['list'], env))).toMatch(/ 2, old until .+ UTC /);

    expect(await succeeded(runWebhooks(['disable', id], env))).toMatch(
      /^Disabled .+\nRunning services act on it within 2 s/,
    );
    expect(await succeeded(runWebhooks(['list'], env))).toMatch(/ disabled .+ disabled by an operator$/m);
    const enabled = await succeeded(runWebhooks(['enable', id], env));
    expect(enabled).toContain('(it was disabled: disabled by an operator): delivery resumes after pet 2');
  });
});

describe('npm run webhooks, refusing', () => {
  it('when the command line is wrong, then it exits 2 before touching the database, never repeating a secret', {
    timeout: 60_000,
  }, async () => {
    // An unreachable database: a usage error must be found without it.
    const env = { MONGODB_URI: 'mongodb://127.0.0.1:1/', MONGODB_DB: 'unused' };
    const key = ['--key', 'key_0000000000000000'];
    const cases: [string[], RegExp][] = [
      [['frob'], /unknown command "frob": use add, list/],
      [['add'], /add needs a URL/],
      [['add', ...key], /add needs a URL/],
      [['add', 'https://1.1.1.1/'], /add needs --key KEY_ID/],
      [['add', 'https://1.1.1.1/', ...key, '--status', 'lost'], /--status takes available, pending, sold, not "lost"/],
      [['add', 'ftp://1.1.1.1/', ...key], /the URL is refused/],
      [['add', 'https://1.1.1.1/', '--key', PASTED_KEY], /not the key itself/],
      [['list', '--status', 'sold'], /--status applies to add only/],
      [['rotate-secret', UNKNOWN_ID], /rotate-secret needs --overlap/],
      [['rotate-secret', UNKNOWN_ID, '--overlap', '10x'], /--overlap takes a duration .* not "10x"/],
      [['rotate-secret', UNKNOWN_ID, '--overlap', '30d'], /at most 7d, not "30d"/],
      [['rotate-secret', UNKNOWN_ID, '--overlap=-1s'], /--overlap takes a duration .* not "-1s"/],
      [['redeliver', UNKNOWN_ID], /redeliver needs --since CURSOR/],
      [['redeliver', UNKNOWN_ID, '--since', 'not-a-cursor'], /--since takes a pet's cursor/],
      [['deliveries', UNKNOWN_ID, '--limit', '1001'], /--limit takes a whole number from 1 to 1000/],
      [['disable'], /disable needs the ID of an endpoint/],
      [['disable', PASTED_SECRET], /not a secret/],
      [['remove', PASTED_KEY], /not a secret/],
      [['redeliver', UNKNOWN_ID, '--since', PASTED_SECRET], /not \(a secret or key, not repeated here\)/],
      [[PASTED_SECRET], /unknown command \(a secret or key, not repeated here\)/],
      [['add', PASTED_SECRET, ...key], /not a secret or key/],
    ];
    // Two at a time: many npm and node start-ups at once starve a small machine.
    const twoAtATime = pLimit(2);
    const runs = await Promise.all(
      cases.map(([args, message]) => twoAtATime(async () => ({ run: await runWebhooks(args, env), message }))),
    );
    for (const { run, message } of runs) {
      expectCleanFailure(run, 2, message);
      expect(run.stderr).not.toContain(PASTED_SECRET);
      expect(run.stderr).not.toContain(PASTED_KEY);
    }
    const help = await succeeded(runWebhooks(['--help'], env));
    expect(help).toMatch(/^Usage: npm run webhooks -- <command>/);
    for (const documented of ['WEBHOOK_ALLOW_PRIVATE_TARGETS=true', 'stored in the database', 'rotate-secret ID']) {
      expect(help).toContain(documented);
    }
  });

  it('when the key cannot read pets, or the id is unknown, then it exits 1 naming only what is safe to repeat', {
    timeout: 90_000,
  }, async () => {
    const { env, database, keyId: writer } = await setUp(0, ['pets:write']);
    const keys = createApiKeyStore(database.db);
    const revoked = (await keys.issue({ name: 'revoked', scopes: ['pets:read'] })).record.id;
    await keys.revoke(revoked);
    const expired = (await keys.issue({ name: 'old', expiresInDays: 1, now: new Date(Date.now() - 2 * DAY_MS) })).record
      .id;
    await database.close();
    const url = 'https://1.1.1.1/hooks';
    const cases: [string[], string | RegExp][] = [
      [['add', url, '--key', writer], `key ${writer} (receiver) lacks the scope pets:read`],
      [['add', url, '--key', revoked], `key ${revoked} (revoked) is revoked`],
      [['add', url, '--key', expired], `key ${expired} (old) has expired`],
      [['add', url, '--key', 'key_0000000000000000'], 'no issued key has key_0000000000000000'],
      [['add', url, '--key', 'whatever'], 'no issued key has that id'],
      [['disable', UNKNOWN_ID], `no webhook endpoint has the id ${UNKNOWN_ID}`],
      [['rotate-secret', 'whe_nothex', '--overlap', '1m'], 'no webhook endpoint has that id'],
      [['redeliver', UNKNOWN_ID, '--since', encodeCursor(1)], `the id ${UNKNOWN_ID}`],
    ];
    const twoAtATime = pLimit(2);
    const runs = await Promise.all(
      cases.map(([args, message]) => twoAtATime(async () => ({ run: await runWebhooks(args, env), message }))),
    );
    for (const { run, message } of runs) expectCleanFailure(run, 1, message);
    expect(runs[6]?.run.stderr).not.toContain('whe_nothex');
    expect(JSON.parse(await succeeded(runWebhooks(['list', '--json'], env)))).toEqual([]);
  });

  it('when the URL is on a loopback or private address, then it is refused unless WEBHOOK_ALLOW_PRIVATE_TARGETS=true', {
    timeout: 60_000,
  }, async () => {
    const { env, database, keyId } = await setUp(0);
    await database.close();
    for (const url of ['http://10.0.0.1/', 'http://localhost:1/']) {
      expectCleanFailure(
        await runWebhooks(['add', url, '--key', keyId], env),
        1,
        /the URL is refused: .+WEBHOOK_ALLOW_PRIVATE_TARGETS=true/,
      );
    }
    expect(JSON.parse(await succeeded(runWebhooks(['list', '--json'], env)))).toEqual([]);
    const allowed = await succeeded(
      runWebhooks(['add', 'http://localhost:1/', '--key', keyId, '--json'], { ...env, ...ALLOW_PRIVATE }),
    );
    expect(JSON.parse(allowed)).toMatchObject({ url: 'http://localhost:1/', state: 'active' });
  });
});
