// Messages between bench/run.ts (the load generator) and bench/servers.ts (the servers under test),
// plus the names both sides share. Every parent request carries an id; the child answers it once.

/** memory: pets held in bench/memory-repository.ts; ferretdb: the Mongo repository on FerretDB. */
export type StoreName = 'memory' | 'ferretdb';

/** A cost-curve database, named by its pet count. */
export type CurveStore = `curve-${number}`;

/** The order each round runs them in. */
export const TARGETS = [
  'floor',
  'rest',
  'rest-silent',
  'rest-redis',
  'sofa',
  'fastify',
  'graphql',
  'graphql-by-id',
  'yoga',
  'mercurius',
  'rest-otel-off',
  'rest-otel-0',
  'rest-otel-100',
  'graphql-otel-off',
  'graphql-otel-0',
  'graphql-otel-100',
] as const;
export type Target = (typeof TARGETS)[number];

/**
 * `rest-redis` is `rest` with its rate limits counted in Redis (REDIS_URL, a redis-server of the
 * servers process's own): the limiter's cost per request beside the memory one. That cost does not
 * depend on the operation, so it runs `get` only.
 */
export const REDIS_TARGET_OPERATIONS: readonly string[] = ['get'];

/**
 * `fastify` (REST) and `mercurius` (GraphQL) are the peers built on fastify, with request logging
 * and rate limits (bench/fastify-peers.ts): the get by id is what they are compared on.
 */
export const FASTIFY_PEER_OPERATIONS: readonly string[] = ['get'];

/**
 * `rest-silent` is `rest` with its logger at `silent`: no access log. `rest` beside it, in the same
 * round, is what the info-level access log costs a request; the get shows it most.
 */
export const SILENT_TARGET_OPERATIONS: readonly string[] = ['get'];

/**
 * `graphql-by-id` is `graphql` (the same service) sent each operation's published documentId
 * instead of the document: what a trusted-documents client pays. A query and a mutation suffice.
 */
export const BY_ID_TARGET_OPERATIONS: readonly string[] = ['get', 'create'];

/**
 * The tracing processes (bench/tracing-servers.ts), each serving our service alone, started with
 * `npm start`'s flags (the telemetry entry included): `otel-off` with no OTEL_* variables (what every
 * user without a Collector runs), `otel-0` tracing at 0% sampling, `otel-100` at 100%, both
 * exporting to a sink in the load generator. Processes of their own, because tracing patches
 * node:http and turns AsyncLocalStorage on for a whole process: in the main one it would slow every
 * target. Their `rest-*` and `graphql-*` targets are compared with `*-otel-off`, never with `rest`.
 */
export const TRACING_MODES = ['otel-off', 'otel-0', 'otel-100'] as const;
export type TracingMode = (typeof TRACING_MODES)[number];

/** Which tracing process serves a target; undefined for the main servers process. */
export function tracingModeOf(target: Target): TracingMode | undefined {
  return TRACING_MODES.find((mode) => target.endsWith(`-${mode}`));
}

/** Tracing costs per span; the get is the cheapest request, so the cost shows most there. */
export const TRACING_TARGET_OPERATIONS: readonly string[] = ['get'];

/** What the parent asks the child to set up; passed as argv[2] (JSON). */
export interface ServersConfig {
  stores: StoreName[];
  /** Pets seeded in each store before the main rounds. */
  seedPets: number;
  /** Pet counts of the cost curve: one FerretDB database and floor server each; empty for none. */
  curveSizes: number[];
}

export interface DatabaseInfo {
  /** Which server startEmbeddedDatabase found (FerretDB unless it fell back). */
  kind: string;
  /** One line for people: which database the figures came from. */
  label: string;
  /** Where it listens (loopback), for the tracing processes to read the same pets. */
  uri: string;
}

/** What the parent asks a tracing process (bench/tracing-servers.ts) to serve; argv[2] (JSON). */
export interface TracingServersConfig {
  mode: TracingMode;
  stores: StoreName[];
  seedPets: number;
  /** The key the main servers process accepts: the same scenarios run against both. */
  apiKey: string;
  /** The main process's database, for the ferretdb store (database `petstore_bench`, read only). */
  mongoUri?: string;
}

export interface Ready {
  type: 'ready';
  /** Base URL of every target the process serves, per store that was asked for. */
  urls: Partial<Record<StoreName, Partial<Record<Target, string>>>>;
  /** The floor server over each cost-curve database, by its pet count. */
  curveUrls: Record<number, string>;
  apiKey: string;
  database?: DatabaseInfo;
  rss: number;
  pid: number;
}

export type Request =
  | { type: 'rss'; id: number }
  /**
   * Wait until the store has no call in flight; with `reset`, then drop every pet a create run
   * added, so the next run meets the seeded store again.
   */
  | { type: 'settle'; id: number; store: StoreName | CurveStore; reset: boolean }
  | { type: 'stop' };

export type ChildMessage =
  | Ready
  | { type: 'reply'; id: number; rss: number; error?: string }
  | { type: 'failed'; message: string };
