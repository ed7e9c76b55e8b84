import { setTimeout as sleep } from 'node:timers/promises';
import { createGraphQLError } from '@graphql-tools/utils';
import type { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { unauthenticated } from '../auth/api-keys.ts';
import type { Config } from '../config.ts';
import type { ExecutionExchange, FollowPets } from '../context.ts';
import { ErrorCode } from '../graphql/errors.ts';
import type { StreamRecord } from '../http/exchange.ts';
import type { KeyGone, StreamEnd, StreamRefusal } from '../http/stream-outcomes.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Pet } from '../pets/pet.ts';
import { announcingCreates, createLocalPetChanges } from '../pets/pet-changes.ts';
import { createPetFeed } from '../pets/pet-feed.ts';
import type { PetRepository } from '../pets/pet-repository.ts';
import { createRedisPetChanges } from '../pets/redis-pet-changes.ts';
import { createOpenStreams, type StreamMetrics, type StreamSlot } from './open-streams.ts';

/**
 * A refused stream's Retry-After, in seconds. Streams last minutes, so a slot seldom frees sooner;
 * a client that retries no faster than this costs the instance little, and a balancer may send the
 * retry to another instance.
 */
export const SUBSCRIPTION_RETRY_AFTER_SECONDS = 10;
/**
 * Pets a stream delivers for one rate-limit point: as many as one page of `GET /v1/pets?limit=100`,
 * so a resume from an old cursor costs what paging the same pets would.
 */
export const PETS_PER_POINT = 100;

/** Takes points from the stream's key: 0 once paid, else how long to wait before asking again. */
export type StreamPayment = (exchange: Pick<ExecutionExchange, 'keyId' | 'id'>, points: number) => Promise<number>;

/** A stopping instance: the retry goes to another instance, so it need not wait. */
const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

function refusal(reason: StreamRefusal, limits: { maxPerKey: number; maxTotal: number }): GraphQLError {
  if (reason === 'shutdown') {
    return createGraphQLError('This instance is shutting down: subscribe again to reach another one.', {
      extensions: {
        code: ErrorCode.SERVICE_UNAVAILABLE,
        http: { status: 503, headers: { 'Retry-After': String(SHUTDOWN_RETRY_AFTER_SECONDS) } },
      },
    });
  }
  const message =
    reason === 'per_key'
      ? `This API key has ${limits.maxPerKey} subscriptions open on this instance, the most it may: close one before opening another.`
      : `This instance holds ${limits.maxTotal} subscriptions, the most it may: subscribe again later.`;
  return createGraphQLError(message, {
    extensions: {
      code: ErrorCode.TOO_MANY_SUBSCRIPTIONS,
      limit: reason,
      http: { status: 429, headers: { 'Retry-After': String(SUBSCRIPTION_RETRY_AFTER_SECONDS) } },
    },
  });
}

/** A key gone (revoked, expired) since its request's check, a slowly sent body ago: as any bad key, 401. */
function keyGone(): GraphQLError {
  const { error, headers } = unauthenticated(true);
  return createGraphQLError(error.message, {
    extensions: { code: error.code, http: { status: error.status, headers } },
  });
}

/**
 * Pays a point for the next pets, waiting while the key has none (the stream pauses, it is not cut):
 * false when the stream ended meanwhile. Each wait lasts until the key's second quota is whole again.
 */
async function paidFor(pay: () => Promise<number>, signal: AbortSignal): Promise<boolean> {
  for (let waitMs = await pay(); waitMs > 0; waitMs = await pay()) {
    try {
      await sleep(waitMs, undefined, { signal });
    } catch {
      return false;
    }
  }
  return !signal.aborted;
}

/**
 * The feed's pets, each counted as delivered, a point paid before each PETS_PER_POINT of them; the
 * slot is released when the stream ends: the feed's end (its signal aborted: shutdown), a failure,
 * or the consumer's return() (the client left).
 */
async function* delivered(source: AsyncGenerator<Pet, void, undefined>, slot: StreamSlot, pay: () => Promise<number>) {
  let reason: StreamEnd = 'client';
  let count = 0;
  try {
    for await (const pet of source) {
      if (count++ % PETS_PER_POINT === 0 && !(await paidFor(pay, slot.signal))) break;
      slot.delivered();
      yield pet;
    }
    reason = slot.signal.reason === 'client' ? 'client' : 'shutdown';
  } catch (error) {
    reason = 'error';
    throw error;
  } finally {
    slot.end(reason);
  }
}

export interface SubscriptionsOptions {
  config: Pick<
    Config,
    'REDIS_URL' | 'SUBSCRIPTION_POLL_MS' | 'SUBSCRIPTION_SETTLE_MS' | 'MAX_SUBSCRIPTIONS_PER_KEY' | 'MAX_SUBSCRIPTIONS'
  >;
  /** The store's repository: the feed reads it, and creates through it are announced. */
  pets: PetRepository;
  logger: Logger;
  /** Stream metrics, and the failed authentications a key gone as its stream opens is counted with. */
  metrics: StreamMetrics & Pick<Metrics, 'countAuthFailure'>;
  /** Whether a key still authenticates (the key ring): a stream opening asks again. */
  keyStanding: (keyId: string) => KeyGone | undefined;
  /** What a stream's pets cost its key as it delivers them (rate-limits.ts streamPoints). */
  payStream: StreamPayment;
}

/**
 * What subscriptions need of the service: the repository every face creates through (it says
 * "pets changed" after each create), the feed subscribers read, and the open streams' limits. With
 * REDIS_URL, instances tell each other of creates through Redis; without it, only this instance's
 * subscribers hear of them at once (others find them on the slow timer).
 */
export function createSubscriptions({ config, pets, logger, metrics, keyStanding, payStream }: SubscriptionsOptions) {
  const changes = config.REDIS_URL ? createRedisPetChanges({ url: config.REDIS_URL, logger }) : createLocalPetChanges();
  const feed = createPetFeed({
    pets,
    changes,
    pollMs: config.SUBSCRIPTION_POLL_MS,
    settleMs: config.SUBSCRIPTION_SETTLE_MS,
    logger,
  });
  const limits = { maxPerKey: config.MAX_SUBSCRIPTIONS_PER_KEY, maxTotal: config.MAX_SUBSCRIPTIONS };
  const streams = createOpenStreams({ ...limits, metrics });

  /**
   * New pets for each subscriber, within the stream limits. The slot is taken before any event and
   * released, at the latest, when the response closes: Yoga may refuse the stream after subscribing
   * (an Accept without text/event-stream) without ever reading it.
   */
  const followPets: FollowPets = (query, exchange) => {
    // The key sync ends the streams open when a key goes; this one was not open yet. Refused 401 as
    // any bad key is, so counted with them.
    if (keyStanding(exchange.keyId)) {
      metrics.countAuthFailure('invalid');
      throw keyGone();
    }
    const record: StreamRecord = { events: 0, end: undefined };
    const slot = streams.take(exchange.keyId, {
      delivered: () => {
        record.events++;
      },
      ended: (reason) => {
        record.end = reason;
      },
      cut: () => exchange.cut?.(),
    });
    if (typeof slot === 'string') throw refusal(slot, limits);
    exchange.stream = record;
    exchange.whenClosed?.(() => slot.end('client'));
    return delivered(feed.follow(query, slot.signal), slot, () => payStream(exchange, 1));
  };

  return {
    /** The repository every face uses: REST, GraphQL, the fast path and idempotent creates. */
    pets: announcingCreates(pets, changes),
    followPets,
    /** The feed itself, with no stream limits: for webhooks, whose pace is their receivers'. */
    followFeed: feed.follow,
    /**
     * Every open stream ends (SSE `complete`), one not ended a moment later has its connection cut,
     * and new ones are refused: the instance is stopping.
     */
    endStreams: () => streams.endAll(),
    /** The key was revoked or expired: its streams end. */
    endKey: (keyId: string, why: KeyGone) => streams.endKey(keyId, why),
    close: async () => {
      streams.endAll();
      await feed.close();
      await changes.close();
    },
  };
}
