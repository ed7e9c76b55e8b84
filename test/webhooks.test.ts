import type { RequestListener } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import type { Scope } from '../src/auth/scopes.ts';
import { DEFAULTS } from '../src/config.ts';
import { encodeCursor } from '../src/pets/cursor.ts';
import {
  createWebhookStore,
  DELIVERIES_KEPT_PER_ENDPOINT,
  WEBHOOK_DELIVERIES_COLLECTION,
  type WebhookEndpoint,
} from '../src/webhooks/webhook-store.ts';
import { runWebhooks } from './support/cli-command.ts';
import { sampleIn } from './support/metric-sample.ts';
import { assertMatchesWebhook } from './support/openapi-contract.ts';
import { createPet } from './support/pet-created.ts';
import { AUTH, startTestServer, type TestServer } from './support/test-server.ts';
import { answerWith, type Receiver, startReceiver } from './support/webhook-receiver.ts';

const SETTINGS = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1',
  WEBHOOK_TIMEOUT_MS: '500',
};
/** Endpoints are read every 2 s, keys every 2 s: an endpoint starts within a few seconds. */
const WAIT = { timeout: 15_000, interval: 50 };

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const each of opened.splice(0).reverse()) await each.close();
});

async function server(env: Record<string, string> = {}): Promise<TestServer> {
  const started = await startTestServer({ env: { ...SETTINGS, ...env } });
  opened.push(started);
  return started;
}

async function receiver(answer: RequestListener = answerWith(204)): Promise<Receiver> {
  const started = await startReceiver(answer);
  opened.push(started);
  return started;
}

/** An issued key's id, read by the server's key sync. */
async function issuedKeyId(on: TestServer, scopes: Scope[] = ['pets:read']): Promise<string> {
  const { key, record } = await createApiKeyStore(on.database.db).issue({ name: 'integration', scopes });
  await vi.waitFor(async () => {
    expect((await on.request.get(`${on.restBasePath}/pets`).set({ Authorization: `Bearer ${key}` })).status).not.toBe(
      401,
    );
  }, WAIT);
  return record.id;
}

/** An endpoint registered now: it gets the pets created from here on. */
async function register(on: TestServer, url: string, keyId: string): Promise<WebhookEndpoint> {
  const store = createWebhookStore(on.database.db);
  const position = (await on.request.get(`${on.restBasePath}/pets?limit=100`).set(AUTH)).body.reduce(
    (highest: number, pet: { id: number }) => Math.max(highest, pet.id),
    0,
  );
  return store.add({ url, keyId, status: null, position });
}

const secretOf = (endpoint: WebhookEndpoint) => endpoint.secrets[0]?.secret as string;

describe('webhooks: new pets pushed to receivers as signed Standard Webhooks', () => {
  it('when pets are created over REST, then the receiver gets each once, in id order, verified, data equal to GET /v1/pets/{id}, within the poll interval plus 1 s', {
    timeout: 60_000,
  }, async () => {
    const on = await server();
    const hooks = await receiver();
    // Registered as an operator does it, through the command, on the service's database.
    const env = { MONGODB_URI: inject('mongoUri'), MONGODB_DB: on.dbName, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
    const added = await runWebhooks(['add', hooks.url, '--key', await issuedKeyId(on), '--json'], env);
    expect(added.code, added.stderr).toBe(0);
    const { secret } = JSON.parse(added.stdout) as { secret: string };
    // The endpoint is started by the dispatcher's next sync: one pet first, to know it listens.
    const first = await createPet(on, 'first');
    await vi.waitFor(() => expect(hooks.received).toHaveLength(1), WAIT);
    const createdAt = new Map<number, number>();
    const ids = [first];
    for (let index = 0; index < 20; index++) {
      const id = await createPet(on, `pet ${index}`, index % 2 ? 'sold' : undefined);
      createdAt.set(id, performance.now());
      ids.push(id);
    }
    await vi.waitFor(() => expect(hooks.received.length).toBeGreaterThanOrEqual(ids.length), WAIT);
    const payloads = hooks.payloads(secret);
    expect(payloads.map((payload) => payload.data.id)).toEqual(ids);
    expect(new Set(hooks.received.map((each) => each.headers['webhook-id'])).size).toBe(ids.length);
    // What was sent is what the OpenAPI document's `webhooks` section describes.
    for (const request of hooks.received) assertMatchesWebhook('petCreated', request);
    for (const payload of payloads) {
      const got = await on.request.get(`${on.restBasePath}/pets/${payload.data.id}`).set(AUTH);
      expect(payload.data).toEqual(got.body);
      expect(payload).toMatchObject({ type: 'pet.created', cursor: encodeCursor(payload.data.id) });
    }
    const latencies = hooks.received
      .slice(1)
      .map((each, index) => each.at - (createdAt.get(ids[index + 1] as number) as number))
      .sort((a, b) => a - b);
    const p95 = latencies[Math.ceil(latencies.length * 0.95) - 1] as number;
    console.info(
      `webhooks: ${latencies.length} deliveries, created to received p95 ${Math.round(p95)} ms, max ${Math.round(latencies.at(-1) as number)} ms`,
    );
    expect(p95).toBeLessThan(DEFAULTS.SUBSCRIPTION_POLL_MS + 1_000);
    const text = await on.metrics.scrape.text();
    expect(sampleIn(text, 'webhook_deliveries_total', { outcome: 'delivered' })).toBe(ids.length);
    // Caught up: the endpoint's lag behind the newest pet comes down to nothing at the next sync.
    const endpointId = (await createWebhookStore(on.database.db).list())[0]?.id as string;
    await vi.waitFor(async () => {
      expect(sampleIn(await on.metrics.scrape.text(), 'webhook_endpoint_lag_pets', { endpoint: endpointId })).toBe(0);
    }, WAIT);
  });

  it('when the receiver answers 503 with Retry-After: 1 three times, then 200, then four attempts carry one webhook-id with fresh timestamps, and the log lists them', {
    timeout: 60_000,
  }, async () => {
    const on = await server();
    let count = 0;
    const hooks = await receiver((req, res) =>
      ++count <= 3 ? answerWith(503, { 'Retry-After': '1' })(req, res) : answerWith(200)(req, res),
    );
    const endpoint = await register(on, hooks.url, await issuedKeyId(on));
    await vi.waitFor(
      async () => expect(await on.metrics.scrape.text()).toMatch(/webhook_endpoints\{state="active"\} 1/),
      WAIT,
    );
    const id = await createPet(on, 'retried');
    await vi.waitFor(() => expect(hooks.received).toHaveLength(4), WAIT);
    // Nothing more comes once it was acknowledged.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(hooks.received).toHaveLength(4);
    expect(new Set(hooks.received.map((each) => each.headers['webhook-id'])).size).toBe(1);
    const stamps = hooks.received.map((each) => Number(each.headers['webhook-timestamp']));
    for (let index = 1; index < stamps.length; index++) {
      expect(stamps[index]).toBeGreaterThan(stamps[index - 1] as number);
    }
    for (const each of hooks.received) expect(hooks.verifies(each, secretOf(endpoint))).toBe(true);
    const store = createWebhookStore(on.database.db);
    await vi.waitFor(async () => expect(await store.deliveries(endpoint.id, 10)).toHaveLength(4), WAIT);
    const attempts = (await store.deliveries(endpoint.id, 10)).reverse();
    expect(attempts.map((each) => [each.attempt, each.status, each.outcome])).toEqual([
      [1, 503, 'retrying'],
      [2, 503, 'retrying'],
      [3, 503, 'retrying'],
      [4, 200, 'delivered'],
    ]);
    expect(attempts.every((each) => each.petId === id && each.webhookId === hooks.received[0]?.headers['webhook-id']));
    expect((await store.get(endpoint.id))?.position).toBe(id);
  });

  it('when the receiver answers 410, then one attempt and none after; enable delivers every pet created meanwhile', {
    timeout: 60_000,
  }, async () => {
    const on = await server();
    let gone = true;
    const hooks = await receiver((req, res) => answerWith(gone ? 410 : 204)(req, res));
    const endpoint = await register(on, hooks.url, await issuedKeyId(on));
    const store = createWebhookStore(on.database.db);
    await vi.waitFor(
      async () => expect(await on.metrics.scrape.text()).toMatch(/webhook_endpoints\{state="active"\} 1/),
      WAIT,
    );
    const first = await createPet(on, 'refused');
    await vi.waitFor(async () => expect((await store.get(endpoint.id))?.state).toBe('disabled'), WAIT);
    expect((await store.get(endpoint.id))?.stateReason).toMatch(/410/);
    const meanwhile = [await createPet(on, 'meanwhile 1'), await createPet(on, 'meanwhile 2')];
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(hooks.received).toHaveLength(1);
    gone = false;
    await store.enable(endpoint.id);
    await vi.waitFor(() => expect(hooks.received).toHaveLength(4), WAIT);
    expect(hooks.payloads(secretOf(endpoint)).map((payload) => payload.data.id)).toEqual([first, first, ...meanwhile]);
  });

  it('when the secret is rotated with an overlap, then receivers holding the old or the new secret both verify during it, only the new one after', {
    timeout: 60_000,
  }, async () => {
    const on = await server();
    const hooks = await receiver();
    const endpoint = await register(on, hooks.url, await issuedKeyId(on));
    const store = createWebhookStore(on.database.db);
    const old = secretOf(endpoint);
    const rotated = await store.rotateSecret(endpoint.id, 3_000);
    const fresh = rotated?.secret as string;
    expect(fresh).not.toBe(old);
    await createPet(on, 'during the overlap');
    await vi.waitFor(() => expect(hooks.received).toHaveLength(1), WAIT);
    const during = hooks.received[0] as (typeof hooks.received)[number];
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect([hooks.verifies(during, old), hooks.verifies(during, fresh)]).toEqual([true, true]);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await createPet(on, 'after the overlap');
    await vi.waitFor(() => expect(hooks.received).toHaveLength(2), WAIT);
    const after = hooks.received[1] as (typeof hooks.received)[number];
    expect([hooks.verifies(after, old), hooks.verifies(after, fresh)]).toEqual([false, true]);
    // A receiver verifies with the package as it ships: a wrong secret is refused, not merely unmatched.
    expect(() => new Webhook(old).verify(after.body, after.headers as Record<string, string>)).toThrow();
  });

  it('when one receiver never answers, answers 10 MB or closes without answering, then another receiver is not delayed and each attempt ends by its deadline', {
    timeout: 60_000,
  }, async () => {
    const on = await server({ WEBHOOK_RETRY_SCHEDULE: '1' });
    const silent = await receiver(() => {});
    const huge = await receiver((_req, res) => {
      res.writeHead(200, { 'Content-Length': String(10 * 1024 * 1024) });
      res.write(Buffer.alloc(1024 * 1024));
    });
    const cut = await receiver((_req, res) => void res.socket?.destroy());
    const good = await receiver();
    const keyId = await issuedKeyId(on);
    const store = createWebhookStore(on.database.db);
    const [toSilent, toHuge, toCut] = [
      await register(on, silent.url, keyId),
      await register(on, huge.url, keyId),
      await register(on, cut.url, keyId),
    ];
    await register(on, good.url, keyId);
    await vi.waitFor(
      async () => expect(await on.metrics.scrape.text()).toMatch(/webhook_endpoints\{state="active"\} 4/),
      WAIT,
    );
    const createdAt = performance.now();
    const id = await createPet(on, 'for everyone');
    await vi.waitFor(() => expect(good.received).toHaveLength(1), WAIT);
    expect((good.received[0]?.at as number) - createdAt).toBeLessThan(DEFAULTS.SUBSCRIPTION_POLL_MS);
    for (const endpoint of [toSilent, toCut]) {
      await vi.waitFor(async () => expect((await store.get(endpoint.id))?.state).toBe('failing'), WAIT);
    }
    const attempts = async (endpoint: WebhookEndpoint) => (await store.deliveries(endpoint.id, 10)).reverse();
    expect(await attempts(toSilent)).toHaveLength(2);
    for (const each of await attempts(toSilent)) {
      expect(each).toMatchObject({ status: null, error: expect.stringMatching(/timed out/) });
      expect(each.latencyMs).toBeLessThan(2_000);
    }
    for (const each of await attempts(toCut)) expect(each).toMatchObject({ status: null, error: expect.any(String) });
    // A 2xx is the acknowledgement: what follows it is read no further than a bound, and not waited for.
    await vi.waitFor(async () => expect((await store.get(toHuge.id))?.position).toBe(id), WAIT);
    const [delivered] = await attempts(toHuge);
    expect(delivered).toMatchObject({ status: 200, outcome: 'delivered' });
    expect(delivered?.latencyMs).toBeLessThan(2_000);
  });

  it('when the receiver redirects, then the redirect is not followed and the attempt failed', {
    timeout: 60_000,
  }, async () => {
    const on = await server({ WEBHOOK_RETRY_SCHEDULE: '1' });
    const elsewhere = await receiver();
    const redirecting = await receiver(answerWith(302, { Location: elsewhere.url }));
    const endpoint = await register(on, redirecting.url, await issuedKeyId(on));
    const store = createWebhookStore(on.database.db);
    await vi.waitFor(
      async () => expect(await on.metrics.scrape.text()).toMatch(/webhook_endpoints\{state="active"\} 1/),
      WAIT,
    );
    await createPet(on, 'redirected');
    await vi.waitFor(async () => expect((await store.get(endpoint.id))?.state).toBe('failing'), WAIT);
    expect(redirecting.received).toHaveLength(2);
    expect(elsewhere.connections()).toBe(0);
    const [last] = await store.deliveries(endpoint.id, 1);
    expect(last).toMatchObject({
      status: 302,
      outcome: 'failed',
      error: expect.stringMatching(/redirect not followed/),
    });
  });

  it('when the endpoint’s key is revoked, then its deliveries stop at the next key sync', {
    timeout: 60_000,
  }, async () => {
    const on = await server();
    const hooks = await receiver();
    const keyId = await issuedKeyId(on);
    await register(on, hooks.url, keyId);
    await vi.waitFor(
      async () => expect(await on.metrics.scrape.text()).toMatch(/webhook_endpoints\{state="active"\} 1/),
      WAIT,
    );
    await createPet(on, 'before');
    await vi.waitFor(() => expect(hooks.received).toHaveLength(1), WAIT);
    await createApiKeyStore(on.database.db).revoke(keyId);
    // The key sync reads every 2 s, then the dispatcher's next look ends the endpoint's delivery.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    await createPet(on, 'after');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(hooks.received).toHaveLength(1);
  });

  it('when an endpoint has more attempts logged than are kept, then pruning keeps its newest 1,000 and no other endpoint’s', {
    timeout: 60_000,
  }, async () => {
    const on = await server();
    const store = createWebhookStore(on.database.db);
    const attempt = (endpointId: string, index: number) => ({
      ...{ endpointId, webhookId: `msg_${index}`, petId: index, attempt: 1, at: new Date(1_700_000_000_000 + index) },
      ...{ status: 204, latencyMs: 1, error: null, outcome: 'delivered' as const },
    });
    const log = on.database.db.collection(WEBHOOK_DELIVERIES_COLLECTION);
    await log.insertMany(
      Array.from({ length: DELIVERIES_KEPT_PER_ENDPOINT + 25 }, (_, index) => attempt('whe_a', index)),
    );
    await log.insertMany(Array.from({ length: 10 }, (_, index) => attempt('whe_b', index)));
    expect(await store.prune(['whe_a', 'whe_b'])).toBe(25);
    const kept = await store.deliveries('whe_a', 2_000);
    expect(kept).toHaveLength(DELIVERIES_KEPT_PER_ENDPOINT);
    expect(kept.at(-1)?.petId).toBe(25);
    expect(await store.deliveries('whe_b', 2_000)).toHaveLength(10);
  });

  it('when the instance stops mid-retry and another starts on the database, then it resumes at the stored position with the same webhook-ids', {
    timeout: 60_000,
  }, async () => {
    const first = await startTestServer({ env: SETTINGS, keepDatabase: true });
    let acknowledging = false;
    const hooks = await receiver((req, res) => answerWith(acknowledging ? 204 : 503)(req, res));
    const endpoint = await register(first, hooks.url, await issuedKeyId(first));
    const ids = [await createPet(first, 'one'), await createPet(first, 'two'), await createPet(first, 'three')];
    await vi.waitFor(() => expect(hooks.received.length).toBeGreaterThanOrEqual(2), WAIT);
    const refusedIds = new Set(hooks.received.map((request) => request.headers['webhook-id']));
    await first.close();
    const before = hooks.received.length;
    acknowledging = true;
    const resumed = await startTestServer({ env: SETTINGS, dbName: first.dbName });
    opened.push(resumed);
    await vi.waitFor(() => expect(hooks.received.length - before).toBeGreaterThanOrEqual(3), WAIT);
    const after = hooks.payloads(secretOf(endpoint)).slice(before);
    expect(after.map((payload) => payload.data.id)).toEqual(ids);
    // The message refused before the stop is the one sent first after it, under its id.
    expect(refusedIds.has(hooks.received[before]?.headers['webhook-id'])).toBe(true);
  });
});
