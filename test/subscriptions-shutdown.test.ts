import { describe, expect, it } from 'vitest';
import { createPetAt } from './support/create-pet-at.ts';
import {
  DELAY_MS,
  expectAtDelayEnd,
  expectCleanExit,
  sigterm,
  startRestartingService,
} from './support/rolling-restart.ts';
import { subscribeSse } from './support/sse.ts';
import { AUTH } from './support/test-server.ts';

const PET_CREATED = 'subscription { petCreated { cursor pet { id name } } }';

describe('subscription streams at SIGTERM (a rolling restart)', () => {
  it('stay open through SHUTDOWN_DELAY_MS, end with `complete` within 1 s of its end, and the process exits 0 well before SHUTDOWN_TIMEOUT_MS', {
    timeout: 60_000,
  }, async () => {
    const service = await startRestartingService('streams_stop');
    try {
      const { origin } = service;
      const streams = await Promise.all([
        subscribeSse(origin, { query: PET_CREATED, headers: AUTH }),
        subscribeSse(origin, { query: PET_CREATED, headers: AUTH, method: 'GET' }),
      ]);
      expect(streams.map((stream) => stream.status)).toEqual([200, 200]);
      const signalled = sigterm(service);

      // During the delay the instance still serves, and its streams still deliver.
      const id = await createPetAt(origin, AUTH, 'During the delay');
      for (const stream of streams) {
        const result = await stream.nextResult(1_000);
        expect(result.data).toMatchObject({ petCreated: { pet: { id: String(id) } } });
      }
      expect(signalled.sinceSignal()).toBeLessThan(DELAY_MS);

      await Promise.all(
        streams.map(async (stream) => {
          const event = await stream.next(DELAY_MS + 1_000);
          expect(event.event).toBe('complete');
          expectAtDelayEnd(signalled);
        }),
      );
      await expectCleanExit(service, signalled);
    } finally {
      service.kill();
    }
  });
});
