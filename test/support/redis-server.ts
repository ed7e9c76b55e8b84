import { afterAll, beforeAll } from 'vitest';
import { type RedisServer, startRedisServer } from '../../scripts/redis-server.ts';

export { type RedisServer, startRedisServer };

/**
 * A redis-server of the test file's own (Debian's package, never a mock): started in beforeAll and
 * stopped in afterAll, whatever the tests did to it (frozen or killed). Read it inside tests and hooks.
 */
export function useRedisServer(): RedisServer {
  let started: RedisServer | undefined;
  beforeAll(async () => {
    started = await startRedisServer();
  });
  afterAll(async () => {
    await started?.stop();
  });
  const current = (): RedisServer => {
    if (!started) throw new Error('the Redis server starts in beforeAll: read it inside tests and hooks');
    return started;
  };
  return new Proxy({} as RedisServer, { get: (_target, key) => Reflect.get(current(), key) });
}
