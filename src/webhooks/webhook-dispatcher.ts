import { setTimeout as sleep } from 'node:timers/promises';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { startRefreshLoop } from '../db/refresh-loop.ts';
import type { Pet } from '../pets/pet.ts';
import type { PetFeedQuery } from '../pets/pet-feed.ts';
import { type AttemptResult, attemptDelivery } from './webhook-attempt.ts';
import { createRedisLeases, type EndpointLeases, singleInstanceLeases } from './webhook-leases.ts';
import { petCreatedBody, signedHeaders, webhookIdOf } from './webhook-message.ts';
import type { DeliveryOutcome, EndpointState, WebhookEndpoint, WebhookStore } from './webhook-store.ts';

/** Standard Webhooks' schedule after the first attempt, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const DEFAULT_RETRY_SCHEDULE_S = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400];
/** How often the endpoints are read again: an operator's change reaches every instance within this. */
export const ENDPOINT_SYNC_MS = 2_000;
/** Deliveries are pruned every this many syncs (a minute). */
const PRUNE_EVERY_SYNCS = 30;
/** Each wait is the schedule's ± this share, so endpoints failing together do not retry together. */
const JITTER = 0.1;

export interface WebhookDispatcherOptions {
  store: WebhookStore;
  /** The pet feed (pet-feed.ts): each pet after the position, once, in id order, then each new one as it settles. */
  follow: (query: PetFeedQuery, signal: AbortSignal) => AsyncGenerator<Pet, void, undefined>;
  /** The highest stored pet id: each endpoint's lag is measured from it. */
  highestPetId: () => Promise<number>;
  /** Whether the endpoint's key authenticates now and has pets:read (the key sync's view). */
  keyMayRead: (keyId: string) => boolean;
  leases: EndpointLeases;
  logger: Logger;
  metrics: {
    countDelivery(outcome: DeliveryOutcome): void;
    setEndpoints(state: EndpointState, count: number): void;
    /** Per active endpoint, the ids between its position and the newest pet; the others' are dropped. */
    setLags(lags: ReadonlyMap<string, number>): void;
  };
  retryScheduleMs: readonly number[];
  timeoutMs: number;
  maxConcurrent: number;
  allowPrivateTargets: boolean;
  syncMs?: number;
  /** The first sync waits for this (the key sync's first read: before it, no issued key is known). */
  startAfter?: Promise<unknown>;
}

interface Runner {
  revision: number;
  controller: AbortController;
  done: Promise<void>;
}

const outcomeOf = (result: AttemptResult, lastAttempt: boolean): DeliveryOutcome => {
  if (result.status !== null && result.status >= 200 && result.status < 300) return 'delivered';
  if (result.status === 410) return 'gone';
  return lastAttempt ? 'failed' : 'retrying';
};

/** The schedule's wait with its jitter, or the receiver's Retry-After if later: false when the runner ended first. */
function wait(scheduledMs: number, retryAfterMs: number, signal: AbortSignal): Promise<boolean> {
  const ms = Math.max(scheduledMs * (1 - JITTER + 2 * JITTER * Math.random()), retryAfterMs);
  return sleep(ms, undefined, { signal }).then(
    () => true,
    () => false,
  );
}

/** Every attempt at one pet until a 2xx, a 410, the end of the schedule or the runner's end: whether to go on. */
async function deliver(
  { options, slots }: { options: WebhookDispatcherOptions; slots: LimitFunction },
  endpoint: WebhookEndpoint,
  pet: Pet,
  signal: AbortSignal,
): Promise<boolean> {
  const { store, logger, metrics } = options;
  const webhookId = webhookIdOf(endpoint.id, pet.id);
  const body = petCreatedBody(pet, new Date());
  const schedule = options.retryScheduleMs;
  for (let number = 1; !signal.aborted; number++) {
    if (!options.keyMayRead(endpoint.keyId)) return false;
    const headers = signedHeaders(endpoint.secrets, { webhookId, body, now: new Date() });
    const request = { url: endpoint.url, headers, body, timeoutMs: options.timeoutMs, signal };
    const at = new Date();
    const result = await slots(() => attemptDelivery({ ...request, allowPrivate: options.allowPrivateTargets }));
    if (signal.aborted && result.status === null) return false;
    const outcome = outcomeOf(result, number > schedule.length);
    const { status, latencyMs, error = null } = result;
    const entry = { endpointId: endpoint.id, webhookId, petId: pet.id, attempt: number, status, latencyMs, outcome };
    logger.info(error ? { ...entry, error } : entry, 'webhook delivery attempt');
    metrics.countDelivery(outcome);
    await store.record({ ...entry, at, error }).catch((failure: unknown) => {
      logger.warn({ err: failure, endpointId: endpoint.id }, 'a delivery attempt was not logged');
    });
    if (outcome === 'delivered') {
      await store.advance(endpoint.id, endpoint.revision, pet.id);
      return true;
    }
    if (outcome !== 'retrying') {
      const [state, reason] =
        outcome === 'gone'
          ? (['disabled', 'the receiver answered 410 Gone'] as const)
          : (['failing', `no 2xx after ${number} attempts: waiting for an operator (webhooks enable)`] as const);
      await store.stop(endpoint.id, endpoint.revision, state, reason);
      return false;
    }
    if (!(await wait(schedule[number - 1] ?? 0, result.retryAfterMs ?? 0, signal))) return false;
  }
  return false;
}

/** One endpoint's messages, from its stored position, until its revision changes, its lease is lost or a stop. */
async function serve(
  context: { options: WebhookDispatcherOptions; slots: LimitFunction },
  endpoint: WebhookEndpoint,
  signal: AbortSignal,
): Promise<void> {
  const query = { afterId: endpoint.position, ...(endpoint.status ? { status: endpoint.status } : {}) };
  for await (const pet of context.options.follow(query, signal)) {
    // A database that fails here is retried at the next sync, from the stored position.
    if (!(await deliver(context, endpoint, pet, signal))) return;
  }
}

/** Endpoints by state, and each active one's lag behind the newest pet. */
function report(options: WebhookDispatcherOptions, endpoints: readonly WebhookEndpoint[]): void {
  const { metrics } = options;
  const counts: Record<EndpointState, number> = { active: 0, disabled: 0, failing: 0 };
  for (const endpoint of endpoints) counts[endpoint.state]++;
  for (const state in counts) metrics.setEndpoints(state as EndpointState, counts[state as EndpointState]);
  void options.highestPetId().then(
    (highest) => {
      const active = endpoints.filter((endpoint) => endpoint.state === 'active');
      metrics.setLags(new Map(active.map((endpoint) => [endpoint.id, Math.max(0, highest - endpoint.position)])));
    },
    () => {},
  );
}

/**
 * New pets to every active endpoint, from the pet feed: one message at a time per endpoint, in id
 * order, its position stored after each 2xx, so nothing is lost across restarts. Each endpoint is
 * served by the instance holding its lease; at most `maxConcurrent` attempts are under way at once.
 */
export function createWebhookDispatcher(options: WebhookDispatcherOptions) {
  const { store, leases, logger } = options;
  const slots = pLimit(options.maxConcurrent);
  const runners = new Map<string, Runner>();
  let syncs = 0;
  let stopped = false;
  let closed: Promise<void> | undefined;

  /** Serves the endpoint once the runner it replaces has stopped: one message in flight per endpoint. */
  function start(endpoint: WebhookEndpoint, after: Promise<void> | undefined): void {
    const controller = new AbortController();
    const done = Promise.resolve(after)
      .then(() => serve({ options, slots }, endpoint, controller.signal))
      .catch((error: unknown) => {
        logger.warn({ err: error, endpointId: endpoint.id }, 'webhook dispatch stopped: it resumes at the next sync');
      })
      .finally(() => {
        if (runners.get(endpoint.id)?.controller !== controller) return;
        runners.delete(endpoint.id);
        void leases.release(endpoint.id);
      });
    runners.set(endpoint.id, { revision: endpoint.revision, controller, done });
  }

  /** Stops the endpoint's runner; what it was doing settles with the promise returned. */
  function end(endpointId: string): Promise<void> | undefined {
    const runner = runners.get(endpointId);
    runner?.controller.abort();
    runners.delete(endpointId);
    return runner?.done;
  }

  async function sync(): Promise<void> {
    const endpoints = await store.list();
    const wanted = new Map(
      endpoints
        .filter((each) => each.state === 'active' && options.keyMayRead(each.keyId))
        .map((each) => [each.id, each]),
    );
    const replaced = new Map<string, Promise<void> | undefined>();
    for (const [id, runner] of runners) {
      if (wanted.get(id)?.revision !== runner.revision) replaced.set(id, end(id));
      if (!wanted.has(id)) void leases.release(id);
    }
    for (const [id, endpoint] of wanted) {
      if (stopped) return;
      const held = runners.has(id);
      if (await (held ? leases.renew(id) : leases.acquire(id))) {
        if (!held) start(endpoint, replaced.get(id));
      } else end(id);
    }
    report(options, endpoints);
    if (++syncs % PRUNE_EVERY_SYNCS === 0) await store.prune(endpoints.map((each) => each.id));
  }

  const reads = startRefreshLoop({
    refresh: async () => {
      await options.startAfter;
      await sync();
    },
    intervalMs: options.syncMs ?? ENDPOINT_SYNC_MS,
    logger,
    what: 'the webhook endpoints',
  });

  return {
    /** Stops every dispatch (an attempt under way is abandoned: it is redelivered with the same webhook-id). */
    close: (): Promise<void> =>
      (closed ??= (async () => {
        stopped = true;
        // The sync under way may still start a runner: it settles before the runners are ended.
        await reads.stop();
        const ending = [...runners.values()].map((runner) => runner.done);
        for (const id of [...runners.keys()]) end(id);
        await Promise.all(ending);
        await leases.close();
      })()),
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;

/** The dispatcher as the configuration sets it: schedule, deadline, concurrency, targets, and leases in Redis with REDIS_URL. */
export function webhookDispatcherOf(
  config: Pick<
    Config,
    | 'REDIS_URL'
    | 'WEBHOOK_RETRY_SCHEDULE'
    | 'WEBHOOK_TIMEOUT_MS'
    | 'WEBHOOK_MAX_CONCURRENT'
    | 'WEBHOOK_ALLOW_PRIVATE_TARGETS'
  >,
  parts: Omit<
    WebhookDispatcherOptions,
    'leases' | 'retryScheduleMs' | 'timeoutMs' | 'maxConcurrent' | 'allowPrivateTargets'
  >,
): WebhookDispatcher {
  return createWebhookDispatcher({
    ...parts,
    leases: config.REDIS_URL ? createRedisLeases(config.REDIS_URL, parts.logger) : singleInstanceLeases,
    retryScheduleMs: (config.WEBHOOK_RETRY_SCHEDULE ?? DEFAULT_RETRY_SCHEDULE_S).map((seconds) => seconds * 1000),
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    maxConcurrent: config.WEBHOOK_MAX_CONCURRENT,
    allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  });
}
