import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { Config } from '../config.ts';
import type { AccessLog } from '../edge/access-log.ts';
import { type ClientAddress, limiterBucketOf } from '../edge/client-address.ts';
import { allowedOrigin, type CorsPolicy } from '../edge/cors.ts';
import type { LimiterStore } from '../edge/limiter-store.ts';
import { createPolicy, isRefusal, type Rate, refusal } from '../edge/rate-limit-policy.ts';
import { GRAPHQL_ENDPOINT } from '../graphql-http/yoga.ts';
import { CloseCode, endSocket, type UpgradeRefusalReason } from './websocket-close.ts';
import { WebSocketOperation } from './websocket-operation.ts';

/** How long an upgraded socket may wait for its `connection_init` (graphql-ws's own default). */
export const CONNECTION_INIT_WAIT_MS = 3_000;

/** A refused upgrade's answer: its status, its fields (Retry-After), and its reason as a GraphQL error when there is one. */
export interface UpgradeRefusal {
  status: number;
  reason?: UpgradeRefusalReason;
  message?: string;
  headers?: Record<string, string>;
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
  /** Browsers' origins allowed besides our own (CORS_ORIGINS), as for /graphql. */
  cors: CorsPolicy | undefined;
  /** Each refused upgrade writes its access-log line as any request's, and is counted by its reason. */
  accessLog: AccessLog;
  countRefused: (reason: UpgradeRefusalReason) => void;
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

const ERROR_CODES: Record<number, string> = { 429: 'RATE_LIMITED', 503: 'SERVICE_UNAVAILABLE' };

/**
 * Only /graphql, and from a browser only a page of our own origin (GraphiQL) or one CORS_ORIGINS
 * lists, as for /graphql; clients that are not browsers send no Origin. Browsers do not apply CORS to
 * WebSockets, so without this any site a key's holder visits could use a key it holds.
 */
function pathOrOriginRefusal(req: IncomingMessage, cors: CorsPolicy | undefined): UpgradeRefusal | undefined {
  if ((req.url ?? '').split('?', 1)[0] !== GRAPHQL_ENDPOINT) return { status: 404 };
  const origin = req.headers.origin;
  if (origin === undefined || allowedOrigin(cors, req) !== undefined) return undefined;
  return URL.canParse(origin) && new URL(origin).host === req.headers.host ? undefined : { status: 403 };
}

function responseOf({ status, headers = {}, message }: UpgradeRefusal): string {
  const body =
    message === undefined ? '' : JSON.stringify({ errors: [{ message, extensions: { code: ERROR_CODES[status] } }] });
  const fields = Object.entries({
    ...(body ? { 'Content-Type': 'application/json; charset=utf-8' } : {}),
    ...headers,
    Connection: 'close',
    'Content-Length': String(Buffer.byteLength(body)),
  }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${fields.join('')}\r\n${body}`;
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
 * WebSocket server takes the socket): only /graphql from an allowed origin; each client address
 * (TRUST_PROXY's rule, an IPv6 address with its /64) has a share of the instance's sockets waiting
 * for `connection_init` and a rate of upgrades per second; the instance's pending total is the last resort. A socket still waiting at
 * CONNECTION_INIT_WAIT_MS is cut, not closed politely: a peer that never answers holds nothing longer.
 * The rate counts in the rate limits' store, so a fleet on one Redis counts an address's upgrades
 * together; the pending counts are each instance's own (the slots they protect are), and the rate
 * bounds what one address can hold across the fleet.
 */
export function createUpgradeAdmission(options: UpgradeAdmissionOptions) {
  const { clientAddress: addressOf, cors, accessLog, countRefused } = options;
  const shares = createPendingShares(options.maxPendingPerAddress, options.maxPending);
  const rateRefusal = createUpgradeRate(options.upgrades, options.store, options.logger);

  /** Answers a refused upgrade, counted by reason if it has one, and writes its access-log line. */
  function refuse(req: IncomingMessage, socket: Duplex, answer: UpgradeRefusal, admitted?: AdmittedUpgrade): void {
    admitted?.release();
    if (answer.reason) countRefused(answer.reason);
    socket.end(responseOf(answer));
    const attempt = new WebSocketOperation(req);
    attempt.clientAddress = addressOf(req);
    attempt.res.statusCode = answer.status;
    accessLog(attempt, performance.now());
  }

  return {
    refuse,
    /** The upgrade's admission (it holds its share from now on), or undefined once it was refused. */
    async admit(req: IncomingMessage, socket: Duplex): Promise<AdmittedUpgrade | undefined> {
      const forbidden = pathOrOriginRefusal(req, cors);
      if (forbidden) return void refuse(req, socket, forbidden);
      const clientAddress = addressOf(req);
      const bucket = limiterBucketOf(clientAddress);
      const full = shares.refusalFor(bucket);
      if (full) return void refuse(req, socket, full);
      // Held before the rate is asked: upgrades arriving meanwhile see it.
      const admitted = shares.hold(bucket, clientAddress, socket);
      const refused = await rateRefusal(bucket, clientAddress);
      if (!refused) return admitted;
      refuse(req, socket, refused, admitted);
    },
  };
}

export type UpgradeAdmission = ReturnType<typeof createUpgradeAdmission>;

/** The admission as the configuration sets it, counting upgrades in the rate limits' `store`. */
export const upgradeAdmissionOf = (
  config: Config,
  parts: Omit<UpgradeAdmissionOptions, 'maxPendingPerAddress' | 'maxPending' | 'upgrades'>,
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
