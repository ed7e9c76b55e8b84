import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeRedisClient, createRedisClient, REDIS_KEY_PREFIX, REDIS_RETRY_MS } from '../redis/client.ts';
import { createChangeListeners, type PetChanges } from './pet-changes.ts';

/** Other applications may share the Redis. */
export const DEFAULT_PET_CHANGES_CHANNEL = `${REDIS_KEY_PREFIX}pets-changed`;
interface Connections {
  publisher: Redis;
  subscriber: Redis;
}

/** Says once when notifications stop reaching other instances, and once when they flow again. */
function createTroubleLog(logger: Logger) {
  let troubled = false;
  return {
    trouble(reason: string): void {
      if (troubled) return;
      troubled = true;
      logger.warn({ reason }, 'Redis does not carry pet notifications: other instances see new pets by their timer');
    },
    fine(): void {
      if (!troubled) return;
      troubled = false;
      logger.info('Redis carries pet notifications again');
    },
  };
}

/**
 * Pet changes shared through Redis pub/sub. announce() tells this instance at once and publishes
 * without waiting, one publish in flight at most, so a frozen Redis grows no queue and delays no create.
 */
export function createRedisPetChanges(options: { url: string; logger: Logger; channel?: string }): PetChanges {
  const { url, logger, channel = DEFAULT_PET_CHANGES_CHANNEL } = options;
  const self = randomUUID();
  const listeners = createChangeListeners((error) => logger.error({ err: error }, 'a pet change listener failed'));
  const log = createTroubleLog(logger);
  let connections: Connections | undefined;
  let closed = false;
  let publishing = false;
  let again = false;

  function publish(): void {
    if (!connections || closed) return;
    if (publishing) {
      again = true;
      return;
    }
    publishing = true;
    const { publisher } = connections;
    publisher
      .publish(channel, self)
      .then(log.fine, (error: Error) => {
        log.trouble(error.message);
        // Past the deadline Redis is frozen or cut off: start the connection again rather than let
        // unanswered publishes pile up on it (until it is back, each fails at once).
        if (publisher.status === 'ready') publisher.disconnect(true);
      })
      .finally(() => {
        publishing = false;
        if (again) {
          again = false;
          publish();
        }
      });
  }

  const loading = connect({ url, channel, self, log, tell: listeners.tell })
    .then((connected) => {
      connections = connected;
      if (closed) return disconnect(connected);
    })
    .catch((error: unknown) => {
      logger.error({ err: error }, 'cannot load the Redis client: pet notifications stay in this instance');
    });

  return {
    announce(): void {
      listeners.tell();
      publish();
    },
    onChange: listeners.add,
    async close() {
      closed = true;
      listeners.clear();
      await loading;
      if (connections) await disconnect(connections);
    },
  };
}

interface ConnectOptions {
  url: string;
  channel: string;
  self: string;
  log: ReturnType<typeof createTroubleLog>;
  tell: () => void;
}

/** Both connections: a subscribed one can publish nothing. */
async function connect({ url, channel, self, log, tell }: ConnectOptions): Promise<Connections> {
  const [publisher, subscriber] = await Promise.all([
    createRedisClient(url, 'petstore-gateway-pet-changes'),
    createRedisClient(url, 'petstore-gateway-pet-changes'),
  ]);
  for (const client of [publisher, subscriber]) client.on('error', (error: Error) => log.trouble(error.message));
  // Our own message coming back would only cost one look more: skip it all the same.
  subscriber.on('message', (from: string, message: string) => from === channel && message !== self && tell());
  let subscribed = false;
  // Subscribed once, the client subscribes again by itself after each reconnect (autoResubscribe).
  const subscribe = () => {
    if (subscribed || subscriber.status !== 'ready') return;
    subscriber.subscribe(channel).then(
      () => {
        subscribed = true;
      },
      (error: Error) => {
        log.trouble(error.message);
        setTimeout(subscribe, REDIS_RETRY_MS).unref();
      },
    );
  };
  subscriber.on('ready', subscribe);
  subscribe();
  return { publisher, subscriber };
}

/** Both connections closed, each within the command deadline. */
async function disconnect({ publisher, subscriber }: Connections): Promise<void> {
  await Promise.all([closeRedisClient(publisher), closeRedisClient(subscriber)]);
}
