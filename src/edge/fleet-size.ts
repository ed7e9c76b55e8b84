import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { REDIS_RETRY_MS } from '../redis/client.ts';

/** An instance not heard from for this long has left the fleet (one that stops cleanly says so at once). */
const MEMBER_TTL_MS = 3 * REDIS_RETRY_MS;

// Scored by Redis's clock, not the instances' (theirs may differ): adds this instance, drops those
// gone quiet, and counts who is left.
const HEARTBEAT = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[1], ms, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('ZCARD', KEYS[1])`;

/** A count that allows each instance its share of a limit: told the fleet's size (1 until one is learned). */
export interface Shared {
  shareAmong(instances: number): void;
}

/**
 * How many instances count their rate limits in this Redis, learned through Redis itself: each says
 * it is there every REDIS_RETRY_MS; the count is kept as last learned while Redis does not answer, so
 * each instance can count its share of a limit until it does. Learned rather than configured: a fleet
 * that scales needs no setting kept in step with it.
 */
export function createFleetSize(key: string, logger: Logger) {
  const id = randomUUID();
  const counts: Shared[] = [];
  let client: Redis | undefined;
  let instances = 1;
  let beating: NodeJS.Timeout | undefined;

  function learned(answer: unknown): void {
    const now = Math.max(1, Number(answer) || 1);
    if (now === instances) return;
    instances = now;
    for (const count of counts) count.shareAmong(now);
    logger.info(
      { instances: now },
      'instances sharing the rate limits through Redis: each counts its share while Redis is out',
    );
  }

  function beat(): void {
    if (client?.status !== 'ready') return;
    // A failed beat changes nothing: the count stays as last learned.
    client.eval(HEARTBEAT, 1, key, id, MEMBER_TTL_MS).then(learned, () => {});
  }

  return {
    /** From now on `count` follows the fleet's size. */
    follow(count: Shared): void {
      counts.push(count);
      count.shareAmong(instances);
    },
    /** Starts saying this instance is there, at once and again on each reconnect. */
    join(redis: Redis): void {
      client = redis;
      redis.on('ready', beat);
      beat();
      beating = setInterval(beat, REDIS_RETRY_MS).unref();
    },
    /** Stops saying so, and leaves the count at once (within the command deadline; a failure waits out the TTL). */
    async leave(): Promise<void> {
      clearInterval(beating);
      if (client?.status === 'ready') await client.zrem(key, id).catch(() => {});
    },
  };
}
