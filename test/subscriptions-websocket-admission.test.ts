// Who may open a GraphQL WebSocket before it is authenticated: per client address shares of the
// sockets waiting for `connection_init` and of upgrades per second, so that no address can take
// every pending slot of the instance (issue 36, M1).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleIn } from './support/metric-sample.ts';
import { type SilentUpgrade, silentUpgrade } from './support/silent-upgrade.ts';
import { startTestServer, type TestServer } from './support/test-server.ts';
import { upgradeStatus } from './support/websocket.ts';

const OTHER_ADDRESS = '127.0.0.2';
/** The documented wait for `connection_init`. */
const INIT_WAIT_MS = 3_000;

/** The status a WebSocket upgrade from `localAddress` got (101 when it opened); the socket is closed at once. */
const upgradeFrom = (baseUrl: string, localAddress: string) => upgradeStatus(baseUrl, {}, localAddress);

const refusals = async (server: TestServer, reason: string) =>
  sampleIn(await server.metrics.scrape.text(), 'websocket_upgrades_refused_total', { reason });

/**
 * The attacker: `lanes` silent upgrades from one address, each re-opened as soon as it is dropped,
 * or a moment after it is refused (no attacker honours Retry-After). Stops when `stop()` is called.
 */
function holdSilentUpgrades(baseUrl: string, lanes: number) {
  const state = { stopped: false, held: 0, refused: [] as SilentUpgrade[], lifetimes: [] as number[] };
  const open = new Set<SilentUpgrade>();
  async function lane(): Promise<void> {
    while (!state.stopped) {
      const upgrade = await silentUpgrade(baseUrl).catch(() => undefined);
      if (!upgrade) continue;
      if (upgrade.status !== 101) {
        state.refused.push(upgrade);
        upgrade.destroy();
        await sleep(100);
        continue;
      }
      open.add(upgrade);
      state.held = open.size;
      state.lifetimes.push(await upgrade.closed);
      open.delete(upgrade);
      state.held = open.size;
    }
  }
  const running = Promise.all(Array.from({ length: lanes }, lane));
  return {
    state,
    async stop(): Promise<void> {
      state.stopped = true;
      for (const upgrade of open) upgrade.destroy();
      await running;
    },
  };
}

describe('WebSocket upgrades before authentication', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { MAX_PENDING_WEBSOCKETS: '8', MAX_PENDING_WEBSOCKETS_PER_ADDRESS: '3' },
    });
  });
  afterAll(() => server.close());

  it('a silent upgrade is cut at the documented wait, whether or not the peer answers the close frame', async () => {
    const upgrade = await silentUpgrade(server.baseUrl);
    expect(upgrade.status).toBe(101);
    // Generous: the wait, and two seconds more. A polite close would wait for the peer for 30 s.
    const openFor = await Promise.race([upgrade.closed, sleep(INIT_WAIT_MS + 2_000, Number.POSITIVE_INFINITY)]);
    upgrade.destroy();
    expect(openFor).toBeGreaterThanOrEqual(INIT_WAIT_MS - 100);
    expect(openFor).toBeLessThan(INIT_WAIT_MS + 2_000);
  });

  it('while one address holds all the silent upgrades it may, re-opening each as it is dropped, another address is answered 101 every time', async () => {
    // More lanes than the instance has pending slots: without a per-address share they take them all.
    const attacker = holdSilentUpgrades(server.baseUrl, 10);
    try {
      const deadline = performance.now() + 5_000;
      while (attacker.state.held < 3 && performance.now() < deadline) await sleep(20);
      expect(attacker.state.held).toBeGreaterThanOrEqual(3);
      const statuses: number[] = [];
      // Over two of the waits: the attacker re-opens its dropped sockets meanwhile.
      for (let probe = 0; probe < 24; probe++) {
        statuses.push(await upgradeFrom(server.baseUrl, OTHER_ADDRESS));
        await sleep(250);
      }
      expect(statuses.filter((status) => status !== 101)).toEqual([]);
      expect(attacker.state.held).toBeLessThanOrEqual(3);
    } finally {
      await attacker.stop();
    }
    const refused = attacker.state.refused;
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((upgrade) => upgrade.status === 429 && Number(upgrade.headers['retry-after']) >= 1)).toBe(
      true,
    );
    expect(await refusals(server, 'address_pending')).toBeGreaterThan(0);
    // Each held socket ended at the wait (generously), not after the close handshake's 30 s.
    expect(Math.max(...attacker.state.lifetimes)).toBeLessThan(INIT_WAIT_MS + 2_000);
  });
});

describe('WebSocket upgrade shares behind a trusted proxy', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      trustProxy: 'loopback',
      env: { MAX_PENDING_WEBSOCKETS_PER_ADDRESS: '2', WEBSOCKET_UPGRADE_LIMIT: '2', WEBSOCKET_UPGRADE_BURST: '4' },
    });
  });
  afterAll(() => server.close());

  const from = (address: string) => ({ headers: { 'X-Forwarded-For': address } });

  it("the share is the forwarded client's: one client over it gets 429, another behind the same proxy 101", async () => {
    const held = [
      await silentUpgrade(server.baseUrl, from('203.0.113.7')),
      await silentUpgrade(server.baseUrl, from('203.0.113.7')),
    ];
    expect(held.map((upgrade) => upgrade.status)).toEqual([101, 101]);
    const third = await silentUpgrade(server.baseUrl, from('203.0.113.7'));
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('3');
    third.destroy();
    const neighbour = await silentUpgrade(server.baseUrl, from('203.0.113.8'));
    expect(neighbour.status).toBe(101);
    for (const upgrade of [...held, neighbour]) upgrade.destroy();
  });

  it('past its upgrades per second, an address gets 429 with Retry-After and the RateLimit fields', async () => {
    const statuses: SilentUpgrade[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      const upgrade = await silentUpgrade(server.baseUrl, from('198.51.100.9'));
      statuses.push(upgrade);
      upgrade.destroy();
      await upgrade.closed;
    }
    const refused = statuses.find((upgrade) => upgrade.status === 429);
    expect(statuses.slice(0, 4).map((upgrade) => upgrade.status)).toEqual([101, 101, 101, 101]);
    expect(refused?.headers).toMatchObject({ 'retry-after': expect.stringMatching(/^[1-9]\d*$/) });
    expect(refused?.headers['ratelimit-policy']).toBe('"ws-upgrades";q=2;w=1');
    expect(await refusals(server, 'address_rate')).toBeGreaterThan(0);
  });
});
