import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { Config } from '../config.ts';
import { type ClientAddress, limiterBucketOf } from '../edge/client-address.ts';
import type { LimiterStore } from '../edge/limiter-store.ts';
import { createPolicy, isRefusal, type Rate, refusal } from '../edge/rate-limit-policy.ts';
import { CloseCode, endSocket } from './websocket-close.ts';

/** How long an upgraded socket may wait for its `connection_init` (graphql-ws's own default). */
export const CONNECTION_INIT_WAIT_MS = 3_000;

/** Why an upgrade was refused (websocket_upgrades_refused_total): 429 for an address's share, 503 for the instance. */
export type UpgradeRefusalReason =
  | 'address_pending'
  | 'address_rate'
  | 'instance_pending'
  | 'instance_sockets'
  | 'shutdown';

export interface UpgradeRefusal {
  status: 429 | 503;
  reason: UpgradeRefusalReason;
  message: string;
  headers: Record<string, string>;
}

export interface UpgradeAdmissionOptions {
  /** Sockets one client address may hold before their `connection_init` (MAX_PENDING_WEBSOCKETS_PER_ADDRESS). */
  maxPendingPerAddress: number;
  /** The instance's, whoever holds them: the last resort (MAX_PENDING_WEBSOCKETS). */
  maxPending: number;
  /** Upgrades per second per client address, counted in the rate limits' store (shared through Redis). */
  upgrades: Rate;
  /** Where a request comes from: the failed-authentication limit's rule (TRUST_PROXY). */
  clientAddress: ClientAddress;
  store: LimiterStore;
  logger: Logger;
}

/** An upgrade let through: it holds its address's pending share until its `connection_init` or its end. */
export interface AdmittedUpgrade {
  clientAddress: string;
  /** The upgrade became this WebSocket: cut (4408) if its `connection_init` has not come at the wait. */
  opened(socket: WebSocket): void;
  /** It no longer waits: its `connection_init` came, or the upgrade was refused after all. */
  release(): void;
}

const WAIT_SECONDS = String(Math.ceil(CONNECTION_INIT_WAIT_MS / 1000));

/** Sockets waiting for their `connection_init`, per address bucket and in all. */
function createPendingCounts() {
  const perBucket = new Map<string, number>();
  let total = 0;
  const of = (bucket: string) => perBucket.get(bucket) ?? 0;
  return {
    of,
    total: () => total,
    add(bucket: string): void {
      perBucket.set(bucket, of(bucket) + 1);
      total++;
    },
    remove(bucket: string): void {
      const left = of(bucket) - 1;
      if (left > 0) perBucket.set(bucket, left);
      else perBucket.delete(bucket);
      total--;
    },
  };
}

/** The shares of waiting sockets: an address's (429 past it), then the instance's (503, the last resort). */
function createPendingShares(maxPendingPerAddress: number, maxPending: number) {
  const pending = createPendingCounts();
  const headers = { 'Retry-After': WAIT_SECONDS };
  const perAddress = `Too many WebSockets waiting for connection_init from this address (${maxPendingPerAddress}): send connection_init as soon as the socket opens`;
  const perInstance = 'Too many WebSockets waiting for connection_init on this instance: retry later';
  return {
    refusalFor(bucket: string): UpgradeRefusal | undefined {
      if (pending.of(bucket) >= maxPendingPerAddress) {
        return { status: 429, reason: 'address_pending', message: perAddress, headers };
      }
      if (pending.total() < maxPending) return undefined;
      return { status: 503, reason: 'instance_pending', message: perInstance, headers };
    },
    /** Takes a share for `socket` until it initialises, closes, or is cut at the wait. */
    hold(bucket: string, clientAddress: string, socket: Duplex): AdmittedUpgrade {
      pending.add(bucket);
      let held = true;
      let upgraded: WebSocket | undefined;
      const release = () => {
        if (!held) return;
        held = false;
        clearTimeout(timer);
        pending.remove(bucket);
      };
      const timer = setTimeout(() => {
        release();
        if (!upgraded) return void socket.destroy();
        endSocket(upgraded, CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout', 0);
      }, CONNECTION_INIT_WAIT_MS);
      socket.once('close', release);
      const opened = (ws: WebSocket) => {
        upgraded = ws;
      };
      return { clientAddress, opened, release };
    },
  };
}

/** Upgrades per second per address, in the rate limits' store: the refusal once over, nothing when the store fails. */
function createUpgradeRate(upgrades: Rate, store: LimiterStore, logger: Logger) {
  const rate = createPolicy('ws-upgrades', upgrades, store);
  const overRate = `Too many WebSocket upgrades from this address (over ${upgrades.rate} per second)`;
  return async (bucket: string, clientAddress: string): Promise<UpgradeRefusal | undefined> => {
    if (!rate) return undefined;
    try {
      await rate.consume(bucket);
      return undefined;
    } catch (rejected) {
      if (isRefusal(rejected)) {
        return { status: 429, reason: 'address_rate', ...refusal(rate, rejected.msBeforeNext, overRate) };
      }
      logger.warn({ err: rejected, clientAddress }, 'rate limit store failed; WebSocket upgrade let through');
      return undefined;
    }
  };
}

/**
 * Who may open a GraphQL WebSocket before it is authenticated, decided at the upgrade (before the
 * WebSocket server takes the socket): each client address (TRUST_PROXY's rule, an IPv6 address with
 * its /64) has a share of the instance's sockets waiting for `connection_init` and a rate of upgrades
 * per second; the instance's pending total is the last resort. A socket still waiting at
 * CONNECTION_INIT_WAIT_MS is cut, not closed politely: a peer that never answers holds nothing longer.
 * The rate counts in the rate limits' store, so a fleet on one Redis counts an address's upgrades
 * together; the pending counts are each instance's own (the slots they protect are), and the rate
 * bounds what one address can hold across the fleet.
 */
export function createUpgradeAdmission(options: UpgradeAdmissionOptions) {
  const addressOf = options.clientAddress;
  const shares = createPendingShares(options.maxPendingPerAddress, options.maxPending);
  const rateRefusal = createUpgradeRate(options.upgrades, options.store, options.logger);
  return {
    /** The client address of a request, as the shares count it (for the access log). */
    addressOf,
    /** The upgrade's admission, or why it is refused; an admitted upgrade holds its share from now on. */
    async admit(req: IncomingMessage, socket: Duplex): Promise<AdmittedUpgrade | UpgradeRefusal> {
      const clientAddress = addressOf(req);
      const bucket = limiterBucketOf(clientAddress);
      const full = shares.refusalFor(bucket);
      if (full) return full;
      // Held before the rate is asked: upgrades arriving meanwhile see it.
      const admitted = shares.hold(bucket, clientAddress, socket);
      const refused = await rateRefusal(bucket, clientAddress);
      if (refused) admitted.release();
      return refused ?? admitted;
    },
  };
}

export type UpgradeAdmission = ReturnType<typeof createUpgradeAdmission>;

/** The admission as the configuration sets it, counting upgrades in the rate limits' `store`. */
export const upgradeAdmissionOf = (
  config: Config,
  parts: Pick<UpgradeAdmissionOptions, 'clientAddress' | 'store' | 'logger'>,
) =>
  createUpgradeAdmission({
    maxPendingPerAddress: config.MAX_PENDING_WEBSOCKETS_PER_ADDRESS,
    maxPending: config.MAX_PENDING_WEBSOCKETS,
    upgrades: { rate: config.WEBSOCKET_UPGRADE_LIMIT, burst: config.WEBSOCKET_UPGRADE_BURST },
    ...parts,
  });

/** An instance that is stopping or holds MAX_SUBSCRIPTIONS sockets refuses every upgrade (503), whoever asks. */
export function instanceRefusal(closing: boolean, full: boolean): UpgradeRefusal | undefined {
  if (closing) return { status: 503, reason: 'shutdown', message: 'The instance is stopping', headers: {} };
  if (!full) return undefined;
  const message = 'This instance holds as many WebSockets as it may: retry later';
  return { status: 503, reason: 'instance_sockets', message, headers: { 'Retry-After': '5' } };
}

export const isUpgradeRefusal = (answer: AdmittedUpgrade | UpgradeRefusal): answer is UpgradeRefusal =>
  'status' in answer;
