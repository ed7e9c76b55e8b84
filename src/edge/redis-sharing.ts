import type { Logger } from 'pino';
import { REDIS_RETRY_MS } from '../redis/client.ts';

interface RedisSharingOptions {
  logger: Logger;
  /** True once counts are shared through Redis, false while this instance counts alone. */
  onShared: (shared: boolean) => void;
  /** Asks Redis whether it answers again (calls share() when it does). */
  probe: () => void;
}

/**
 * Whether this instance's counts are shared through Redis right now. Each change is said once (an
 * info line when sharing starts or resumes, a warning when it stops); while alone, Redis is probed
 * every REDIS_RETRY_MS until it answers.
 */
export function createRedisSharing({ logger, onShared, probe }: RedisSharingOptions) {
  let state: 'starting' | 'shared' | 'alone' | 'closed' = 'starting';
  let everShared = false;
  let retrying: NodeJS.Timeout | undefined;

  const sharing = {
    isShared: () => state === 'shared',
    isClosed: () => state === 'closed',
    isStarting: () => state === 'starting',

    share(): void {
      if (state === 'shared' || state === 'closed') return;
      state = 'shared';
      clearInterval(retrying);
      onShared(true);
      logger.info(
        everShared
          ? 'Redis answers again: rate limits are shared by the instances again'
          : 'rate limits count in Redis, shared by every instance using it',
      );
      everShared = true;
    },

    alone(reason: string): void {
      if (state === 'alone' || state === 'closed') return;
      state = 'alone';
      onShared(false);
      logger.warn({ reason }, 'Redis does not answer: each instance counts rate limits alone until it does');
      retrying = setInterval(probe, REDIS_RETRY_MS).unref();
    },

    close(): void {
      state = 'closed';
      clearInterval(retrying);
    },
  };
  return sharing;
}

export type RedisSharing = ReturnType<typeof createRedisSharing>;
