import type { Logger } from 'pino';
import type { ApiKeyStore } from './api-key-store.ts';
import type { KeyRing } from './api-keys.ts';

/** A key created or revoked reaches every instance within this (plus one read of the collection). */
export const ISSUED_KEYS_REFRESH_MS = 2_000;
/** Last uses are written at most this often per key: a write per request would double the load. */
export const LAST_USED_FLUSH_MS = 60_000;

/** What the sync reads keys from and writes last uses to: the apiKeys collection, or memory in the benchmark. */
export type IssuedKeySource = Pick<ApiKeyStore, 'active' | 'recordUse'>;

export interface IssuedKeysSync {
  /** Settles after the first read of the collection (failed or not): the service may listen then. */
  firstRead: Promise<void>;
  /** Stops both timers and writes the last uses still pending. */
  stop(): Promise<void>;
}

/**
 * Keeps the key ring's issued keys in step with the `apiKeys` collection by reading the keys that
 * are not revoked every ISSUED_KEYS_REFRESH_MS, and writes their last uses every LAST_USED_FLUSH_MS.
 * A failed read keeps the keys known so far (an outage must not lock every client out) and is
 * logged once per outage, not once per read.
 */
export function syncIssuedKeys(options: {
  ring: KeyRing;
  store: IssuedKeySource;
  logger: Logger;
  onDatabaseError?: (operation: string) => void;
  refreshMs?: number;
  flushMs?: number;
}): IssuedKeysSync {
  const { ring, store, logger } = options;
  let failing = false;
  let stopped = false;
  let refreshTimer: NodeJS.Timeout | undefined;

  async function refresh(): Promise<void> {
    try {
      ring.setIssuedKeys(await store.active());
      if (failing) logger.info('issued API keys can be read again');
      failing = false;
    } catch (error) {
      options.onDatabaseError?.('apiKeys.active');
      if (!failing) logger.warn({ err: error }, 'cannot read the issued API keys; using the ones known so far');
      failing = true;
    }
  }

  async function flushLastUses(): Promise<void> {
    const lastUses = ring.takeLastUses();
    if (lastUses.size === 0) return;
    try {
      await store.recordUse(lastUses);
    } catch (error) {
      options.onDatabaseError?.('apiKeys.recordUse');
      logger.warn({ err: error, keys: lastUses.size }, 'could not record when API keys were last used');
    }
  }

  const scheduleRefresh = () => {
    if (stopped) return;
    refreshTimer = setTimeout(
      () => void refresh().finally(scheduleRefresh),
      options.refreshMs ?? ISSUED_KEYS_REFRESH_MS,
    );
    refreshTimer.unref();
  };
  const firstRead = refresh().finally(scheduleRefresh);
  const flushTimer = setInterval(() => void flushLastUses(), options.flushMs ?? LAST_USED_FLUSH_MS);
  flushTimer.unref();

  return {
    firstRead,
    async stop() {
      stopped = true;
      clearTimeout(refreshTimer);
      clearInterval(flushTimer);
      await flushLastUses();
    },
  };
}
