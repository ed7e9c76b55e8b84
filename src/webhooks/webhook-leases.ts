import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { closeRedisClient, createRedisClient, REDIS_KEY_PREFIX } from '../redis/client.ts';

/** Which endpoints this instance dispatches: never two instances for one endpoint, so order holds. */
export interface EndpointLeases {
  /** True when the endpoint is this instance's to dispatch from now on (until renew says otherwise). */
  acquire(endpointId: string): Promise<boolean>;
  /** Keeps a held lease; false when it was lost (another instance took it, or Redis did not answer). */
  renew(endpointId: string): Promise<boolean>;
  release(endpointId: string): Promise<void>;
  close(): Promise<void>;
}

/** Without REDIS_URL one instance is the fleet: every endpoint is its own. */
export const singleInstanceLeases: EndpointLeases = {
  acquire: async () => true,
  renew: async () => true,
  release: async () => {},
  close: async () => {},
};

/** A killed holder's endpoints wait this long before another instance takes them (and redelivers its message). */
export const LEASE_TTL_MS = 10_000;

const RENEW =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
/** Taken when free, or kept when already this instance's (a runner replaced after an operator's change). */
const ACQUIRE =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end " +
  "if redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end return 0";
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/**
 * Leases in Redis: SET NX with a TTL, renewed and released only by the token that took it. When Redis
 * does not answer, a lease counts as lost: deliveries wait rather than risk two dispatchers.
 */
export function createRedisLeases(url: string, logger: Logger): EndpointLeases {
  const connecting = createRedisClient(url, 'petstore-gateway:webhook-leases').then((client) => {
    client.on('error', () => {});
    return client;
  });
  const token = randomUUID();
  const keyOf = (endpointId: string) => `${REDIS_KEY_PREFIX}webhook-lease:${endpointId}`;
  /** 1 when the script said so; a Redis that does not answer says no. */
  const run = async (script: string, endpointId: string, ...args: (string | number)[]) => {
    try {
      return (await (await connecting).eval(script, 1, keyOf(endpointId), token, ...args)) === 1;
    } catch (error) {
      logger.debug({ err: error, endpointId }, 'a webhook lease was not confirmed: Redis did not answer');
      return false;
    }
  };
  return {
    acquire: (endpointId) => run(ACQUIRE, endpointId, LEASE_TTL_MS),
    renew: (endpointId) => run(RENEW, endpointId, LEASE_TTL_MS),
    release: async (endpointId) => void (await run(RELEASE, endpointId)),
    close: async () => closeRedisClient(await connecting),
  };
}
