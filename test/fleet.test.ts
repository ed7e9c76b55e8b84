// Production's shape on one machine: three instances of the compiled service on one database, Debian's
// HAProxy in front (health checks on /ready, no retries), rate limits shared through one Redis. Every
// process is started here and none is left when the file ends.
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ISSUED_KEYS_REFRESH_MS } from '../src/auth/api-keys.ts';
import { runKeys } from './support/cli-command.ts';
import { freePort } from './support/free-port.ts';
import { type Balancer, startBalancerOnceUp } from './support/haproxy.ts';
import { alive } from './support/process-tree.ts';
import { type RedisServer, startRedisServer } from './support/redis-server.ts';
import { HAPROXY, REDIS_SERVER, requiring } from './support/required-tools.ts';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import { logEntries, type ServiceProcess } from './support/service-process.ts';
import { type Outcome, percentile, send, steadyLoad, summary } from './support/steady-load.ts';
import { uniqueDbName } from './support/test-server.ts';

const INSTANCES = ['a', 'b', 'c'] as const;
type Name = (typeof INSTANCES)[number];
/** The balancer checks /ready this often and takes a server out after two failed checks. */
const CHECK_INTERVAL_MS = 250;
/**
 * Past two check intervals plus HAProxy's spread: long enough for it to stop sending
 * (docs/operating.md#running-a-fleet).
 */
const SHUTDOWN_DELAY_MS = 1_500;
const LIMIT = 30;
/** Keys the load spreads over, each well under its limit; one more key is held at its limit. */
const LOAD_KEYS = Array.from({ length: 6 }, (_, i) => `fleet-load-key-${i}-aaaaaaaaaa`);
const KEY_ISSUES_REACH_ALL_MS = 5_000;

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Fleet {
  redis: RedisServer;
  balancer: Balancer;
  instances: Map<Name, ServiceProcess>;
  ports: Record<Name, number>;
  dbName: string;
  /** Every process started (instances' node, their restarts, haproxy, redis-server), to prove none is left. */
  pids: Set<number>;
}

let fleet: Fleet;
const needs = requiring(HAPROXY, REDIS_SERVER);

function startInstance(_name: Name, port: number, dbName: string, limitedKey: string): Promise<ServiceProcess> {
  return startServiceOnRunDatabase({
    dbName,
    env: {
      NODE_ENV: 'production',
      PORT: String(port),
      API_KEYS: [...LOAD_KEYS, limitedKey].join(','),
      RATE_LIMIT_PER_KEY: String(LIMIT),
      RATE_LIMIT_BURST: String(LIMIT),
      SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      TRUST_PROXY: 'loopback',
      REDIS_URL: fleet.redis.url,
    },
  });
}

const limitedKeys = Array.from({ length: 3 }, (_, i) => `fleet-limited-key-${i}-aaaaaaaa`);

beforeAll(async () => {
  if (needs.skip) return;
  const dbName = uniqueDbName('fleet');
  const ports = { a: await freePort(), b: await freePort(), c: await freePort() };
  const instances = new Map<Name, ServiceProcess>();
  const pids = new Set<number>();
  const redis = await startRedisServer();
  pids.add(redis.pid());
  fleet = { redis, instances, ports, dbName, pids, balancer: undefined as unknown as Balancer };
  // One after another: the first creates the collections' indexes.
  for (const name of INSTANCES) {
    const instance = await startInstance(name, ports[name], dbName, limitedKeys.join(','));
    instances.set(name, instance);
    pids.add(instance.child.pid as number);
  }
  fleet.balancer = await startBalancerOnceUp({ servers: ports, checkIntervalMs: CHECK_INTERVAL_MS });
  pids.add(fleet.balancer.pid);
}, 120_000);

afterAll(async () => {
  await Promise.all([...(fleet?.instances.values() ?? [])].map((instance) => instance.stop()));
  await fleet?.balancer?.stop();
  await fleet?.redis?.stop();
});

describe.skipIf(needs.skip)(needs.title('a fleet of three instances behind HAProxy without retries'), () => {
  it('restarts one instance after another under GET + POST load without a failed request', {
    timeout: 90_000,
  }, async () => {
    const load = steadyLoad(fleet.balancer.origin, 60, (i) => {
      const headers = bearer(LOAD_KEYS[i % LOAD_KEYS.length] as string);
      return i % 3 === 2
        ? { method: 'POST', path: '/v1/pets', headers, body: { name: `rolling-${i}`, categoryId: 1 } }
        : { method: 'GET', path: i % 3 === 0 ? '/v1/pets?limit=5' : '/v1/pets/1', headers };
    });
    await sleep(1_000);
    const exits: (number | null)[] = [];
    for (const name of INSTANCES) {
      const old = fleet.instances.get(name) as ServiceProcess;
      exits.push(await old.stop('SIGTERM'));
      const restarted = await startInstance(name, fleet.ports[name], fleet.dbName, limitedKeys.join(','));
      fleet.instances.set(name, restarted);
      fleet.pids.add(restarted.child.pid as number);
      await fleet.balancer.waitFor(name, 'UP');
      await sleep(500);
    }
    const outcomes = await load.stop();
    const failed = (outcome: Outcome) => outcome.status !== 200 && outcome.status !== 201 && outcome.status !== 404;
    console.info(`rolling restart of 3 instances behind HAProxy (no retries): ${summary(outcomes, failed)}`);
    expect(exits).toEqual([0, 0, 0]);
    expect(outcomes.length).toBeGreaterThan(500);
    expect(outcomes.filter(failed)).toEqual([]);
  });

  it('holds one key to one limit across the instances (three times the limit sent)', { timeout: 30_000 }, async () => {
    const key = limitedKeys[0] as string;
    const seconds = 4;
    const load = steadyLoad(fleet.balancer.origin, 3 * LIMIT, () => ({
      method: 'GET',
      path: '/v1/pets/1',
      headers: bearer(key),
    }));
    await sleep(seconds * 1000);
    const outcomes = await load.stop();
    const accepted = outcomes.filter((outcome) => outcome.status !== 429).length;
    console.info(
      `one key at ${3 * LIMIT}/s for ${seconds} s over 3 instances, limit ${LIMIT}/s: ${accepted} accepted of ${outcomes.length}`,
    );
    expect(
      outcomes.every((outcome) => outcome.status === 429 || outcome.status === 404 || outcome.status === 200),
    ).toBe(true);
    expect(Math.abs(accepted - LIMIT * seconds)).toBeLessThanOrEqual(0.15 * LIMIT * seconds);
  });

  it('keeps serving with each instance counting its share alone while Redis is frozen, and shares the count again after', {
    timeout: 60_000,
  }, async () => {
    const key = limitedKeys[1] as string;
    // Five times the limit: each instance alone counting the whole limit would let through three times it.
    const load = steadyLoad(fleet.balancer.origin, 5 * LIMIT, () => ({
      method: 'GET',
      path: '/v1/pets/1',
      headers: bearer(key),
    }));
    await sleep(2_000);
    const frozenAt = Date.now();
    fleet.redis.freeze();
    await sleep(4_000);
    fleet.redis.thaw();
    const thawedAt = Date.now();
    await sleep(4_000);
    const outcomes = await load.stop();
    const acceptedPerSecond = (from: number, to: number) =>
      outcomes.filter((outcome) => outcome.at >= from && outcome.at < to && outcome.status !== 429).length /
      ((to - from) / 1000);
    const frozen = acceptedPerSecond(2_500, 6_000);
    const after = acceptedPerSecond(7_000, 10_000);
    const sharedAgain = [...fleet.instances.values()].map((instance) => {
      const line = logEntries(instance.log).find(
        (entry) => entry.time >= thawedAt && /shared by the instances again/.test(entry.msg),
      );
      return line ? line.time - thawedAt : Number.POSITIVE_INFINITY;
    });
    const warnings = [...fleet.instances.values()].map(
      (instance) =>
        logEntries(instance.log).filter((entry) => entry.time >= frozenAt && /Redis does not answer/.test(entry.msg))
          .length,
    );
    const ms = outcomes.map((outcome) => outcome.ms);
    console.info(
      `Redis frozen 4 s under one key at ${5 * LIMIT}/s over 3 instances (limit ${LIMIT}/s): ${summary(outcomes, (o) => o.status === undefined || o.status >= 500)}; ` +
        `accepted ${frozen.toFixed(0)}/s while frozen, ${after.toFixed(0)}/s after; shared again ${sharedAgain.map((t) => `${t} ms`).join(', ')} after the thaw`,
    );
    expect(outcomes.filter((outcome) => outcome.status === undefined || outcome.status >= 500)).toEqual([]);
    expect(percentile(ms, 99)).toBeLessThan(500);
    // Alone, each instance holds the key to its share (a third): about the limit in all, not three times it.
    expect(frozen).toBeGreaterThan(0.5 * LIMIT);
    expect(frozen).toBeLessThan(1.4 * LIMIT);
    expect(after).toBeLessThan(1.4 * LIMIT);
    expect(warnings).toEqual([1, 1, 1]);
    expect(Math.max(...sharedAgain)).toBeLessThan(3_000);
  });

  it('refuses a key revoked with `npm run keys` on every instance within 5 s', { timeout: 60_000 }, async () => {
    const env = { MONGODB_URI: inject('mongoUri'), MONGODB_DB: fleet.dbName };
    const created = await runKeys(['create', 'fleet revocation', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
    const agent = new Agent({ keepAlive: true });
    const statusOn = async (name: Name) =>
      (
        await send(`http://127.0.0.1:${fleet.ports[name]}`, agent, {
          method: 'GET',
          path: '/v1/pets?limit=1',
          headers: bearer(key),
        })
      ).status;
    /** How long until every instance answers `status`, each asked directly, not through the balancer. */
    const allAnswer = async (status: number) => {
      const since = performance.now();
      for (const name of INSTANCES) {
        await expect.poll(() => statusOn(name), { timeout: KEY_ISSUES_REACH_ALL_MS, interval: 100 }).toBe(status);
      }
      return performance.now() - since;
    };
    const toWork = await allAnswer(200);
    const revoked = await runKeys(['revoke', id, '--json'], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const toStop = await allAnswer(401);
    agent.destroy();
    console.info(
      `issued key: on all 3 instances ${Math.round(toWork)} ms after create, refused by all ${Math.round(toStop)} ms after revoke`,
    );
    expect(toStop).toBeLessThan(KEY_ISSUES_REACH_ALL_MS);
    expect(toStop).toBeLessThan(ISSUED_KEYS_REFRESH_MS + 2_000);
  });

  it('makes one pet per Idempotency-Key raced over the instances', { timeout: 60_000 }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const run = randomUUID().slice(0, 8);
    const races = Array.from({ length: 30 }, async (_, i) => {
      // 50 ms apart, each API key's copies stay under its limit.
      await sleep(i * 50);
      const headers = { ...bearer(LOAD_KEYS[i % LOAD_KEYS.length] as string), 'Idempotency-Key': `race-${run}-${i}` };
      const body = { name: `race-${run}-${i}`, categoryId: 3 };
      return Promise.all(
        Array.from({ length: 4 }, () =>
          send(fleet.balancer.origin, agent, { method: 'POST', path: '/v1/pets', headers, body }),
        ),
      );
    });
    const answers = await Promise.all(races);
    agent.destroy();
    const statuses = answers.flat().map((outcome) => outcome.status);
    expect(answers.flat().filter((outcome) => outcome.status !== 201 && outcome.status !== 409)).toEqual([]);
    const client = new MongoClient(inject('mongoUri'));
    try {
      const pets = client.db(fleet.dbName).collection('pets');
      const stored = await pets.find({ name: { $regex: `^race-${run}-` } }).toArray();
      const names = stored.map((pet) => pet.name as string);
      console.info(
        `Idempotency-Key race: 30 keys x 4 at once over 3 instances -> ${stored.length} pets; answers ${JSON.stringify(countBy(statuses))}`,
      );
      expect(names.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `race-${run}-${i}`).sort());
    } finally {
      await client.close();
    }
  });

  it('leaves no process behind when it stops', { timeout: 60_000 }, async () => {
    const rss = [...fleet.instances.values()].map((instance) => instance.rssMb());
    console.info(`instances' resident memory after the tests: ${rss.join(', ')} MB`);
    const exits = await Promise.all([...fleet.instances.values()].map((instance) => instance.stop()));
    const underNode = [...fleet.instances.values()].map((instance) => instance.child.pid as number);
    await fleet.balancer.stop();
    await fleet.redis.stop();
    expect(exits).toEqual([0, 0, 0]);
    expect(alive([...fleet.pids, ...underNode])).toEqual([]);
  });
});

function countBy(values: (number | undefined)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[String(value)] = (counts[String(value)] ?? 0) + 1;
  return counts;
}
