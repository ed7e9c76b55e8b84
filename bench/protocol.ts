// Messages between bench/run.ts (the load generator) and bench/servers.ts (the servers under test).

export interface DatabaseInfo {
  kind: string;
  /** One line for people: which database the figures came from. */
  label: string;
  /** The MongoDB version the server claims on the wire (buildInfo.version). */
  wireVersion?: string;
  ferretdbVersion?: string;
}

/** Where a store's two servers listen: the raw node:http baseline and the real app. */
export interface StoreUrls {
  baselineUrl: string;
  appUrl: string;
}

/** ferretdb: the repository on the embedded database; memory: the same pets held in memory. */
export type StoreName = 'ferretdb' | 'memory';

export type ChildMessage =
  | {
      type: 'ready';
      stores: Record<StoreName, StoreUrls>;
      apiKey: string;
      /** An id that exists, for the get-one scenarios. */
      sampleId: number;
      seeded: number;
      database: DatabaseInfo;
      rss: number;
      pid: number;
    }
  | { type: 'rss'; id: number; rss: number }
  | { type: 'failed'; message: string };

export type ParentMessage = { type: 'rss'; id: number } | { type: 'stop' };
