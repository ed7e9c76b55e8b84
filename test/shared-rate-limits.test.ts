// Rate limits shared by a fleet through a real redis-server (Debian's package, never a mock): two
// services in this process on one Redis and one database, as two instances behind a balancer.
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import type { RateLimitSettings } from '../src/edge/rate-limits.ts';
import { REDIS_DEADLINE_MS } from '../src/redis/client.ts';
import { capturingLogger, type LogLine } from './support/capturing-logger.ts';
import { type RedisServer, startRedisServer } from './support/redis-server.ts';
import { REDIS_SERVER, requiring } from './support/required-tools.ts';
import { startServiceProcess } from './support/service-process.ts';
import { API_KEY, startTestServer, type TestServer, uniqueDbName } from './support/test-server.ts';

const OFF = { rate: 0, burst: 0 };
const LOST = 'Redis does not answer: each instance counts rate limits alone until it does';
const BACK = 'Redis answers again: rate limits are shared by the instances again';

/** The value of one sample in the service's metrics (0 when absent). */
async function sample(server: TestServer, name: string): Promise<number> {
  const text = await server.metrics.scrape.text();
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

const shared = (server: TestServer) => sample(server, 'rate_limit_store_shared');

/** Milliseconds until every server counts in Redis; fails after `withinMs`. */
async function untilShared(servers: TestServer[], withinMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < withinMs) {
    const flags = await Promise.all(servers.map(shared));
    if (flags.every((flag) => flag === 1)) return Math.round(performance.now() - started);
    await sleep(20);
  }
  throw new Error(`the servers did not count in Redis again within ${withinMs} ms`);
}

interface Fleet {
  redis: RedisServer;
  servers: TestServer[];
  logs: LogLine[][];
}

/** A Redis and two services sharing it and one database, counting in Redis; all stopped afterwards. */
async function withFleet(rateLimits: RateLimitSettings, test: (fleet: Fleet) => Promise<void>): Promise<void> {
  const redis = await startRedisServer();
  const servers: TestServer[] = [];
  const logs: LogLine[][] = [];
  try {
    const dbName = uniqueDbName('fleet');
    for (let instance = 0; instance < 2; instance++) {
      const { logger, lines } = capturingLogger();
      logs.push(lines);
      // The last one closed drops the database.
      const keepDatabase = instance === 0;
      servers.push(await startTestServer({ dbName, rateLimits, redisUrl: redis.url, logger, keepDatabase }));
    }
    await untilShared(servers, 5_000);
    await test({ redis, servers, logs });
  } finally {
    for (const server of servers) await server.close();
    await redis.stop();
  }
}

interface Answer {
  instance: number;
  status: number;
  /** When it was sent and how long it took, in ms from the start of the load. */
  at: number;
  ms: number;
}

/** One key's requests at `perSecond`, round-robin over the servers, for `seconds`; `during` runs meanwhile. */
async function load(
  servers: TestServer[],
  perSecond: number,
  seconds: number,
  during: (elapsedMs: () => number) => Promise<unknown> = async () => {},
): Promise<Answer[]> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const sent: Promise<Answer>[] = [];
  const send = async (instance: number): Promise<Answer> => {
    const at = elapsed();
    const server = servers[instance] as TestServer;
    const response = await fetch(`${server.baseUrl}/v1/pets?limit=1`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    await response.arrayBuffer();
    return { instance, status: response.status, at, ms: elapsed() - at };
  };
  const generate = async () => {
    for (let i = 0; i * (1000 / perSecond) < seconds * 1000; i++) {
      const wait = i * (1000 / perSecond) - elapsed();
      if (wait > 0) await sleep(wait);
      sent.push(send(i % servers.length));
    }
  };
  await Promise.all([generate(), during(elapsed)]);
  return Promise.all(sent);
}

const accepted = (answers: Answer[]) => answers.filter((answer) => answer.status === 200).length;

function p99(answers: Answer[]): number {
  const sorted = answers.map((answer) => answer.ms).sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length * 0.99) - 1] ?? Number.NaN;
}

/** `count` requests of the key at once, alternating servers: how many were served. */
async function burst(servers: TestServer[], count: number): Promise<number> {
  const statuses = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const server = servers[i % servers.length] as TestServer;
      return (await server.request.get('/v1/nowhere').set({ Authorization: `Bearer ${API_KEY}` })).status;
    }),
  );
  expect(statuses.every((status) => status === 404 || status === 429)).toBe(true);
  return statuses.filter((status) => status === 404).length;
}

const linesSaying = (lines: LogLine[], msg: string) => lines.filter((line) => line.msg === msg);

const needs = requiring(REDIS_SERVER);

describe.skipIf(needs.skip)(needs.title('rate limits shared through Redis (REDIS_URL)'), () => {
  it('holds one key to one limit over two instances (within 15%)', async () => {
    // 20/s with bursts of 30, at three times the rate, round-robin over both instances for 4.5 s.
    const perKey = { rate: 20, burst: 30 };
    await withFleet({ perKey, authFailures: OFF }, async ({ servers }) => {
      const answers = await load(servers, 60, 4.5);
      // A one-second window opens at 0, 1, 2, 3 and 4 s; the burst allowance once per 10 s.
      const limit = perKey.rate * 5 + (perKey.burst - perKey.rate);
      const served = accepted(answers);
      console.info(`[shared limits] one key over two instances: ${served} of ${answers.length} served, limit ${limit}`);
      expect(Math.abs(served - limit)).toBeLessThanOrEqual(limit * 0.15);
      // Each instance alone would have served about twice as many: both served a share.
      for (const instance of [0, 1]) {
        expect(accepted(answers.filter((answer) => answer.instance === instance))).toBeGreaterThan(limit * 0.3);
      }
      expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 429]));
    });
  });

  it('counts failed authentications of one address across instances', async () => {
    // 3/s with bursts of 5: the sixth wrong key from this address is refused, on either instance.
    await withFleet({ perKey: OFF, authFailures: { rate: 3, burst: 5 } }, async ({ servers }) => {
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const server = servers[i % 2] as TestServer;
        statuses.push((await server.request.get('/v1/pets').set({ Authorization: 'Bearer not-a-key-0000000' })).status);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
      // Both saw the address refused, so both refuse its wrong keys at once; its valid key is served.
      for (const server of servers) {
        expect((await server.request.get('/v1/pets').set({ Authorization: 'Bearer not-a-key-0000000' })).status).toBe(
          429,
        );
        expect((await server.request.get('/v1/pets').set({ Authorization: `Bearer ${API_KEY}` })).status).toBe(200);
      }
    });
  });

  it('charges a GraphQL price across instances from both counters, and a refused price spends nothing', async () => {
    // 5/s with bursts of 10: a price of 8 on one instance leaves 2; 9 on the other is refused, 1 is served.
    await withFleet({ perKey: { rate: 5, burst: 10 }, authFailures: OFF }, async ({ servers, redis }) => {
      const [first, second] = servers as [TestServer, TestServer];
      const lists = (count: number) =>
        `{ ${Array.from({ length: count }, (_, index) => `f${index}: pets(limit: 1) { id }`).join(' ')} }`;
      const send = (server: TestServer, count: number) =>
        server.request
          .post('/graphql')
          .set({ Authorization: `Bearer ${API_KEY}` })
          .send({ query: lists(count) });
      expect((await send(first, 8)).status).toBe(200);
      const refused = await send(second, 9);
      expect(refused.status).toBe(429);
      expect(refused.body.errors?.[0]?.message).toMatch(/^This request costs 9 points/);
      // The refused request paid its first point only: 1 is left, of the burst allowance (whatever second it is).
      expect((await send(first, 1)).status).toBe(200);
      // The burst allowance's count in Redis holds what was paid from it, never a refused price's points.
      const admin = new Redis(redis.url, { lazyConnect: true });
      try {
        await admin.connect();
        const [counter] = await admin.keys('petstore-gateway:rl-default-burst:*');
        expect(Number(await admin.get(counter as string))).toBeLessThanOrEqual(5);
      } finally {
        admin.disconnect();
      }
    });
  });

  it('while Redis is frozen (SIGSTOP) under load: no 5xx, p99 under 500 ms, each instance counts alone; shared again after SIGCONT', async () => {
    const perKey = { rate: 20, burst: 20 };
    await withFleet({ perKey, authFailures: OFF }, async ({ redis, servers, logs }) => {
      const gaugesWhileFrozen: number[] = [];
      let thawedAt = 0;
      let sharedAfterMs = 0;
      const answers = await load(servers, 60, 8, async (elapsed) => {
        await sleep(1_000 - elapsed());
        redis.freeze();
        await sleep(2_000);
        gaugesWhileFrozen.push(...(await Promise.all(servers.map(shared))));
        await sleep(5_000 - elapsed());
        redis.thaw();
        thawedAt = elapsed();
        sharedAfterMs = await untilShared(servers, 5_000);
      });
      const frozen = answers.filter((answer) => answer.at >= 1_100 && answer.at < thawedAt);
      const worst = p99(answers);
      console.info(
        `[shared limits] Redis frozen ${Math.round(thawedAt - 1_000)} ms: ${answers.length} requests, p99 ${worst.toFixed(1)} ms, ` +
          `max ${Math.max(...answers.map((answer) => answer.ms)).toFixed(1)} ms; served while frozen: ` +
          `${[0, 1].map((i) => accepted(frozen.filter((answer) => answer.instance === i))).join(' + ')} of ${frozen.length}; ` +
          `shared again ${sharedAfterMs} ms after SIGCONT`,
      );
      expect(answers.filter((answer) => answer.status >= 500)).toEqual([]);
      expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 429]));
      expect(worst).toBeLessThan(500);
      expect(Math.max(...frozen.map((answer) => answer.ms))).toBeLessThan(500);
      // Only the requests of the first deadline waited for the frozen Redis: the rest never asked it.
      const halfway = frozen.map((answer) => answer.ms).sort((x, y) => x - y)[frozen.length >> 1] ?? Number.NaN;
      expect(halfway).toBeLessThan(REDIS_DEADLINE_MS);
      // Each instance held its own count: within its limit per window, and refusing the rest.
      const windows = Math.ceil((thawedAt - 1_100) / 1000) + 1;
      for (const instance of [0, 1]) {
        const mine = frozen.filter((answer) => answer.instance === instance);
        expect(accepted(mine)).toBeLessThanOrEqual(perKey.rate * windows);
        expect(mine.some((answer) => answer.status === 429)).toBe(true);
      }
      expect(gaugesWhileFrozen).toEqual([0, 0]);
      expect(sharedAfterMs).toBeLessThan(3_000);
      for (const [instance, lines] of logs.entries()) {
        expect(linesSaying(lines, LOST), `instance ${instance}`).toHaveLength(1);
        expect(linesSaying(lines, BACK), `instance ${instance}`).toHaveLength(1);
        expect(await sample(servers[instance] as TestServer, 'rate_limit_store_fallbacks_total')).toBeGreaterThan(0);
      }
      // Shared again: after the window, 40 at once over both instances get one limit of 20.
      await sleep(1_100);
      expect(await burst(servers, 40)).toBe(perKey.rate);
    });
  });

  it('when Redis is killed and restarted under load: no 5xx, each instance counts alone, then shared again', async () => {
    const perKey = { rate: 20, burst: 20 };
    await withFleet({ perKey, authFailures: OFF }, async ({ redis, servers, logs }) => {
      let restartedAt = 0;
      let sharedAfterMs = 0;
      const answers = await load(servers, 60, 6, async (elapsed) => {
        await sleep(1_000 - elapsed());
        await redis.kill();
        await sleep(3_000 - elapsed());
        await redis.restart();
        restartedAt = elapsed();
        sharedAfterMs = await untilShared(servers, 5_000);
      });
      console.info(
        `[shared limits] Redis killed for ${Math.round(restartedAt - 1_000)} ms: ${answers.length} requests, ` +
          `p99 ${p99(answers).toFixed(1)} ms; shared again ${sharedAfterMs} ms after the restart`,
      );
      expect(answers.filter((answer) => answer.status >= 500)).toEqual([]);
      expect(p99(answers)).toBeLessThan(500);
      expect(sharedAfterMs).toBeLessThan(3_000);
      const down = answers.filter((answer) => answer.at >= 1_100 && answer.at < restartedAt);
      for (const instance of [0, 1]) {
        expect(down.some((answer) => answer.instance === instance && answer.status === 429)).toBe(true);
      }
      for (const lines of logs) {
        expect(linesSaying(lines, LOST)).toHaveLength(1);
        expect(linesSaying(lines, BACK)).toHaveLength(1);
      }
      await sleep(1_100);
      expect(await burst(servers, 40)).toBe(perKey.rate);
    });
  });
});

/** A loopback port that was free a moment ago: nothing listens there. */
function unusedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

describe('REDIS_URL pointing at nothing', () => {
  it('the service still starts and serves, counting alone; it says so once and counts it', async () => {
    const port = await unusedPort();
    const { logger, lines } = capturingLogger();
    const started = performance.now();
    const server = await startTestServer({
      rateLimits: { perKey: { rate: 5, burst: 5 }, authFailures: OFF },
      redisUrl: `redis://127.0.0.1:${port}`,
      logger,
    });
    try {
      console.info(`[shared limits] started with Redis unreachable in ${Math.round(performance.now() - started)} ms`);
      expect(await burst([server], 8)).toBe(5);
      // Several reconnects later: still one line, and the checks counted as local.
      await sleep(2_500);
      expect(linesSaying(lines, LOST)).toHaveLength(1);
      expect(linesSaying(lines, LOST)[0]?.reason).toMatch(/ECONNREFUSED|closed/);
      expect(await shared(server)).toBe(0);
      expect(await sample(server, 'rate_limit_store_fallbacks_total')).toBe(8);
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(needs.skip)(needs.title('the compiled service (main.ts) with REDIS_URL'), () => {
  /** The connections the service holds to `redis`, by the name its client gives them. */
  async function serviceConnections(redis: RedisServer): Promise<number> {
    const admin = new Redis(redis.url, { lazyConnect: true });
    try {
      await admin.connect();
      const list = (await admin.client('LIST')) as string;
      return list.split('\n').filter((line) => line.includes('name=petstore-gateway ')).length;
    } finally {
      admin.disconnect();
    }
  }

  const environment = (redisUrl: string) => ({
    MONGODB_URI: inject('mongoUri'),
    MONGODB_DB: uniqueDbName('redis_main'),
    API_KEYS: API_KEY,
    REDIS_URL: redisUrl,
  });
  const logged = (log: string[], msg: string) => log.filter((line) => line.includes(`"msg":"${msg}"`));

  it('counts in Redis once it answers, keeps counting there through the shutdown delay, and exits 0', async () => {
    const redis = await startRedisServer();
    const env = { ...environment(redis.url), SHUTDOWN_DELAY_MS: '1500' };
    const service = await startServiceProcess({ via: 'node', env, echo: 'none' });
    try {
      expect(logged(service.log, 'petstore-gateway is listening')[0]).toContain('"rateLimits":"redis"');
      const get = () => fetch(`${service.origin}/v1/pets?limit=1`, { headers: { Authorization: `Bearer ${API_KEY}` } });
      expect((await get()).status).toBe(200);
      const shared = 'rate limits count in Redis, shared by every instance using it';
      await expect.poll(() => logged(service.log, shared).length).toBe(1);
      expect(await serviceConnections(redis)).toBe(1);
      // SIGTERM: the delay keeps serving (balancers still send), so the Redis client is closed only after the drain.
      service.child.kill('SIGTERM');
      await sleep(500);
      expect((await get()).status).toBe(200);
      expect(await serviceConnections(redis)).toBe(1);
      expect(await service.stop('SIGTERM')).toBe(0);
      expect(await serviceConnections(redis)).toBe(0);
      expect(logged(service.log, LOST)).toEqual([]);
    } finally {
      service.kill();
      await redis.stop();
    }
  });

  it('starts without waiting when Redis is unreachable, serves, warns once, and stops with 0', async () => {
    const started = performance.now();
    const service = await startServiceProcess({
      via: 'node',
      env: environment(`redis://127.0.0.1:${await unusedPort()}`),
      echo: 'none',
    });
    try {
      const startMs = Math.round(performance.now() - started);
      const response = await fetch(`${service.origin}/v1/pets?limit=1`, {
        headers: { Authorization: `Bearer ${API_KEY}` },
      });
      expect(response.status).toBe(200);
      await sleep(2_500);
      console.info(`[shared limits] compiled service with Redis unreachable: listening after ${startMs} ms`);
      expect(logged(service.log, LOST)).toHaveLength(1);
      expect(await service.stop('SIGTERM')).toBe(0);
    } finally {
      service.kill();
    }
  });
});
