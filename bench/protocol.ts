// Messages between bench/run.ts (the load generator) and bench/servers.ts (the servers under test),
// plus the names both sides share. Every parent request carries an id; the child answers it once.

/** memory: pets held in bench/memory-repository.ts; ferretdb: the Mongo repository on FerretDB. */
export type StoreName = 'memory' | 'ferretdb';

/** A cost-curve database, named by its pet count. */
export type CurveStore = `curve-${number}`;

/** The order each round runs them in: A B C D E F. */
export const TARGETS = ['floor', 'rest', 'rest-redis', 'sofa', 'graphql', 'yoga'] as const;
export type Target = (typeof TARGETS)[number];

/**
 * `rest-redis` is `rest` with its rate limits counted in Redis (REDIS_URL, a redis-server of the
 * servers process's own): the limiter's cost per request beside the memory one. That cost does not
 * depend on the operation, so it runs `get` only.
 */
export const REDIS_TARGET_OPERATIONS: readonly string[] = ['get'];

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
}

export interface Ready {
  type: 'ready';
  /** Base URL of every target, per store that was asked for. */
  urls: Partial<Record<StoreName, Record<Target, string>>>;
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
