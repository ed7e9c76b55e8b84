import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeGraphQL } from './support/graphql-client.ts';
import { CreatePetDocument, PetsDocument } from './support/operations.ts';
import { type OwnDatabase, startOwnDatabase } from './support/own-database.ts';
import { type RestClient, type RestPet, restClient } from './support/rest-client.ts';
import { AUTH, startTestServer, type TestServer } from './support/test-server.ts';

// The service and a FerretDB of this file's own, which the tests freeze (SIGSTOP), thaw and stop.
let database: OwnDatabase;
let server: TestServer;
let rest: RestClient;
let seeded: RestPet;

beforeAll(async () => {
  database = await startOwnDatabase();
  server = await startTestServer({ mongoUri: database.uri });
  rest = restClient(server);
  seeded = await rest.addPet({ name: 'Before the outage', categoryId: 1 });
});

afterAll(async () => {
  database?.thaw();
  await server?.close().catch(() => {});
  await database?.remove();
});

/** No wait in this file is open-ended: an answer later than this fails the test with a clear message. */
const ANSWER_BOUND_MS = 15_000;

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_BOUND_MS} ms`)), ANSWER_BOUND_MS);
  });
  try {
    const value = await Promise.race([run(), bound]);
    return { ms: performance.now() - started, value };
  } finally {
    clearTimeout(timer);
  }
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  /** The GraphQL error code, or the REST Error body's code. */
  code: unknown;
}

type Probe = { name: string; run: () => Promise<Answer> };

function restAnswer(response: { status: number; headers: Record<string, string>; body: unknown }): Answer {
  const body = response.body as { code?: unknown };
  return { status: response.status, retryAfter: response.headers['retry-after'], code: body?.code };
}

function graphqlAnswer(response: Awaited<ReturnType<typeof executeGraphQL>>): Answer {
  return {
    status: response.status,
    retryAfter: response.headers['retry-after'],
    code: response.body.errors?.[0]?.extensions?.code,
  };
}

/** One request to every data route; the names of pets they try to create start with `tag`. */
function dataProbes(tag: string): Probe[] {
  return [
    { name: 'GET /v1/pets', run: async () => restAnswer(await rest.listPets('?limit=5')) },
    { name: 'GET /v1/pets/{id}', run: async () => restAnswer(await rest.getPet(seeded.id)) },
    {
      name: 'POST /v1/pets',
      run: async () => restAnswer(await rest.createPet({ name: `${tag} rest`, categoryId: 1 })),
    },
    { name: 'GraphQL pets', run: async () => graphqlAnswer(await executeGraphQL(server, PetsDocument, { limit: 5 })) },
    {
      name: 'GraphQL createPet',
      run: async () =>
        graphqlAnswer(
          await executeGraphQL(server, CreatePetDocument, { input: { name: `${tag} graphql`, categoryId: 1 } }),
        ),
    },
  ];
}

async function probeReady() {
  return timed(async () => {
    const response = await server.request.get('/ready');
    return { status: response.status, retryAfter: response.headers['retry-after'] };
  });
}

async function probeHealth() {
  return timed(async () => (await server.request.get('/health')).status);
}

/** Every data route, /ready and /health at once; what each answered and how long it took. */
async function probeEverything(tag: string) {
  const [data, ready, health] = await Promise.all([
    Promise.all(dataProbes(tag).map(async (probe) => ({ name: probe.name, ...(await timed(probe.run)) }))),
    probeReady(),
    probeHealth(),
  ]);
  return { data, ready, health };
}

type Probed = Awaited<ReturnType<typeof probeEverything>>;

function expectUnavailable({ data, ready, health }: Probed): void {
  for (const { name, ms, value } of data) {
    expect({ name, ...value }).toEqual({ name, status: 503, retryAfter: '5', code: 'SERVICE_UNAVAILABLE' });
    expect(ms, `${name} answered after ${Math.round(ms)} ms`).toBeLessThan(6_000);
  }
  expect(ready.value).toEqual({ status: 503, retryAfter: '5' });
  expect(ready.ms, `/ready answered after ${Math.round(ready.ms)} ms`).toBeLessThan(2_000 + 250);
  expect(health.value).toBe(200);
  expect(health.ms).toBeLessThan(500);
}

function slowest(probed: Probed[]): number {
  return Math.round(Math.max(...probed.flatMap(({ data }) => data.map(({ ms }) => ms))));
}

/** Every pet the service lists now, through the contract. */
async function storedNames(): Promise<string[]> {
  return (await rest.storedPets()).map((pet) => pet.name);
}

/** Polls a data route until it answers 2xx; how long that took after `since`. */
async function firstSuccessAfter(since: number, boundMs: number): Promise<number> {
  while (performance.now() - since < boundMs) {
    const { value } = await timed(async () => (await rest.listPets('?limit=1')).status);
    if (value >= 200 && value < 300) return performance.now() - since;
    await sleep(100);
  }
  throw new Error(`no 2xx within ${boundMs} ms`);
}

describe('when the database freezes (SIGSTOP) and then thaws', () => {
  it('then while frozen every data route answers 503 with Retry-After within 6 s, /ready within 2 s, /health 200', async () => {
    database.freeze();
    // At once (queries wait on open connections) and later (the driver has marked the server down).
    const [atOnce, later] = await Promise.all([
      probeEverything('frozen at once'),
      sleep(3_500).then(() => probeEverything('frozen later')),
    ]);
    expectUnavailable(atOnce);
    expectUnavailable(later);
    console.info(`frozen database: slowest data answer ${slowest([atOnce, later])} ms`);
  });

  it('then once it thaws the first 2xx comes within 5 s, without a restart', async () => {
    database.thaw();
    const recoveredMs = await firstSuccessAfter(performance.now(), 5_000);
    console.info(`thawed database: first 2xx after ${Math.round(recoveredMs)} ms`);
    expect((await probeReady()).value.status).toBe(200);
    // A create that was answered 503 stored nothing behind the client's back.
    expect((await storedNames()).filter((name) => name.startsWith('frozen'))).toEqual([]);
    expect((await rest.createPet({ name: 'After the thaw', categoryId: 1 })).status).toBe(201);
  });

  it('then a create whose client gave up while the database was frozen is not stored after it thaws', async () => {
    database.freeze();
    const gaveUp = Array.from({ length: 3 }, async (_, index) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const sent = fetch(`${server.baseUrl}${server.restBasePath}/pets`, {
        method: 'POST',
        headers: { ...AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: `gave up ${index}`, categoryId: 1 }),
        signal: controller.signal,
      });
      await expect(sent).rejects.toThrow(/abort/i);
    });
    await Promise.all(gaveUp);
    // Thaw before the creates' own deadline: without the client check they would now be stored.
    await sleep(1_000);
    database.thaw();
    await firstSuccessAfter(performance.now(), 5_000);
    // Longer than any create could still be on its way (its deadline is 5 s from its start).
    await sleep(1_500);
    expect((await storedNames()).filter((name) => name.startsWith('gave up'))).toEqual([]);
    expect((await rest.createPet({ name: 'After the clients left', categoryId: 1 })).status).toBe(201);
  });
});

describe('when a create with an Idempotency-Key meets a frozen database', () => {
  it('then it gets 503 within 6 s, and its retries after the thaw get one pet, created once', async () => {
    const headers = { ...AUTH, 'Idempotency-Key': 'outage-retry-1' };
    const body = { name: 'Retried through the outage', categoryId: 1 };
    database.freeze();
    const during = await timed(() => rest.createPet(body, headers));
    database.thaw();
    expect(during.value.status).toBe(503);
    expect(during.ms).toBeLessThan(6_000);
    await firstSuccessAfter(performance.now(), 5_000);
    // A retry may be told to wait (409, Retry-After) while the first attempt's lease runs.
    let retry = await rest.createPet(body, headers);
    for (let attempt = 0; retry.status === 409 && attempt < 12; attempt++) {
      await sleep(1_000);
      retry = await rest.createPet(body, headers);
    }
    expect(retry.status).toBe(201);
    const again = await rest.createPet(body, headers);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(retry.body);
    expect((await storedNames()).filter((name) => name === body.name)).toHaveLength(1);
  });
});

describe('when the database is stopped', () => {
  it('then every data route answers 503 with Retry-After within 6 s, /ready within 2 s, /health 200', async () => {
    await database.stop();
    const [atOnce, later] = await Promise.all([
      probeEverything('stopped at once'),
      sleep(2_500).then(() => probeEverything('stopped later')),
    ]);
    expectUnavailable(atOnce);
    expectUnavailable(later);
    console.info(`stopped database: slowest data answer ${slowest([atOnce, later])} ms`);
  });
});
