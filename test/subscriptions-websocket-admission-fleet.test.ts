// The per-address upgrade rate of a fleet: two services in this process on one real redis-server
// (Debian's package, never a mock), as two instances behind a balancer (issue 36, M1).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { sampleIn } from './support/metric-sample.ts';
import { startRedisServer } from './support/redis-server.ts';
import { REDIS_SERVER, requiring } from './support/required-tools.ts';
import { silentUpgrade } from './support/silent-upgrade.ts';
import { startTestServer, type TestServer, uniqueDbName } from './support/test-server.ts';

const redisNeeded = requiring(REDIS_SERVER);

/** Waits until every server counts in Redis; fails after `withinMs`. */
async function untilShared(servers: TestServer[], withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (performance.now() < deadline) {
    const texts = await Promise.all(servers.map((server) => server.metrics.scrape.text()));
    if (texts.every((text) => sampleIn(text, 'rate_limit_store_shared') === 1)) return;
    await sleep(20);
  }
  throw new Error(`the servers did not count in Redis within ${withinMs} ms`);
}

/** One upgrade from `address` (as the trusted proxy forwards it), dropped at once: its status. */
async function upgradeStatus(server: TestServer, address: string): Promise<number> {
  const upgrade = await silentUpgrade(server.baseUrl, { headers: { 'X-Forwarded-For': address } });
  upgrade.destroy();
  await upgrade.closed;
  // The server's side of the close, so that the address's pending share is free again.
  await sleep(20);
  return upgrade.status;
}

describe.skipIf(redisNeeded.skip)(redisNeeded.title('WebSocket upgrades per address in a fleet'), () => {
  it('the upgrades per second of an address count across the instances sharing Redis', async () => {
    const redis = await startRedisServer();
    const servers: TestServer[] = [];
    try {
      const dbName = uniqueDbName('ws_fleet');
      const env = { WEBSOCKET_UPGRADE_LIMIT: '1', WEBSOCKET_UPGRADE_BURST: '3' };
      for (const keepDatabase of [true, false]) {
        servers.push(await startTestServer({ dbName, redisUrl: redis.url, trustProxy: 'loopback', keepDatabase, env }));
      }
      await untilShared(servers, 5_000);
      const [first, second] = servers as [TestServer, TestServer];
      const onFirst: number[] = [];
      while (!onFirst.includes(429) && onFirst.length < 10) onFirst.push(await upgradeStatus(first, '192.0.2.44'));
      expect(onFirst).toContain(429);
      // Alone, the second instance would take three (its own burst); shared, at most one (a new second's).
      const onSecond = [];
      for (let attempt = 0; attempt < 3; attempt++) onSecond.push(await upgradeStatus(second, '192.0.2.44'));
      expect(onSecond.filter((status) => status === 429).length).toBeGreaterThanOrEqual(2);
      // Another address has its own count.
      expect(await upgradeStatus(second, '192.0.2.45')).toBe(101);
    } finally {
      for (const server of servers) await server.close();
      await redis.stop();
    }
  });
});
