import { describe, expect, inject, it } from 'vitest';
import { startServiceProcess } from './support/service-process.ts';
import { subscribeSse } from './support/sse.ts';
import { API_KEY, AUTH, uniqueDbName } from './support/test-server.ts';

const PET_CREATED = 'subscription { petCreated { cursor pet { id name } } }';
// Long enough for a create over REST and its events to finish on a loaded machine before the delay ends.
const DELAY_MS = 3_000;
const TIMEOUT_MS = 10_000;

describe('subscription streams at SIGTERM (a rolling restart)', () => {
  it('stay open through SHUTDOWN_DELAY_MS, end with `complete` within 1 s of its end, and the process exits 0 well before SHUTDOWN_TIMEOUT_MS', {
    timeout: 60_000,
  }, async () => {
    const service = await startServiceProcess({
      via: 'node',
      env: {
        API_KEYS: API_KEY,
        MONGODB_URI: inject('mongoUri'),
        MONGODB_DB: uniqueDbName('streams_stop'),
        SHUTDOWN_DELAY_MS: String(DELAY_MS),
        SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS),
      },
    });
    try {
      const { origin } = service;
      const streams = await Promise.all([
        subscribeSse(origin, { query: PET_CREATED, headers: AUTH }),
        subscribeSse(origin, { query: PET_CREATED, headers: AUTH, method: 'GET' }),
      ]);
      expect(streams.map((stream) => stream.status)).toEqual([200, 200]);
      const exited = new Promise<number | null>((done) => service.child.once('exit', (code) => done(code)));
      const signalAt = performance.now();
      service.child.kill('SIGTERM');

      // During the delay the instance still serves, and its streams still deliver.
      const created = await fetch(`${origin}/v1/pets`, {
        method: 'POST',
        headers: { ...AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'During the delay', categoryId: 1 }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: number };
      for (const stream of streams) {
        const result = await stream.nextResult(1_000);
        expect(result.data).toMatchObject({ petCreated: { pet: { id: String(id) } } });
      }
      expect(performance.now() - signalAt).toBeLessThan(DELAY_MS);

      const endedAfter = await Promise.all(
        streams.map(async (stream) => {
          const event = await stream.next(DELAY_MS + 1_000);
          expect(event.event).toBe('complete');
          return performance.now() - signalAt;
        }),
      );
      for (const ended of endedAfter) {
        expect(ended).toBeGreaterThanOrEqual(DELAY_MS);
        expect(ended).toBeLessThan(DELAY_MS + 1_000);
      }
      expect(await exited).toBe(0);
      expect(performance.now() - signalAt).toBeLessThan(DELAY_MS + TIMEOUT_MS / 2);
      expect(service.log.join('\n')).not.toMatch(/drain deadline passed/);
    } finally {
      service.kill();
    }
  });
});
