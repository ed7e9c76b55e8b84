import type { Logger } from 'pino';
import { startRefreshLoop } from '../db/refresh-loop.ts';
import type { KeyGone } from '../http/stream-outcomes.ts';
import type { ApiKeyStore } from './api-key-store.ts';
import type { KeyRing } from './api-keys.ts';

/**
 * A key created or revoked reaches every instance within this (plus one read of the collection); an
 * expired key's open streams end within this of its expiry.
 */
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
 * are not revoked every ISSUED_KEYS_REFRESH_MS (a failed read keeps the keys known so far), and
 * writes their last uses every LAST_USED_FLUSH_MS.
 */
export function syncIssuedKeys(options: {
  ring: KeyRing;
  store: IssuedKeySource;
  logger: Logger;
  onDatabaseError?: (operation: string) => void;
  /** Issued keys revoked (or gone from the collection), or expired since the last sync: their open streams end. */
  onKeysGone?: (keyIds: string[], why: KeyGone) => void;
  refreshMs?: number;
  flushMs?: number;
}): IssuedKeysSync {
  const { ring, store, logger } = options;
  const endExpired = () => {
    const expired = ring.takeExpired();
    if (expired.length > 0) options.onKeysGone?.(expired, 'expired');
  };
  const reads = startRefreshLoop({
    refresh: async () => {
      // Requests check expiry themselves; streams opened before it end here, before the read (which
      // may wait for its deadline) and again after it, with the expiries it brought.
      try {
        endExpired();
        const gone = ring.setIssuedKeys(await store.active());
        if (gone.length > 0) options.onKeysGone?.(gone, 'revoked');
      } finally {
        endExpired();
      }
    },
    intervalMs: options.refreshMs ?? ISSUED_KEYS_REFRESH_MS,
    logger,
    what: 'the issued API keys',
    onFailure: () => options.onDatabaseError?.('apiKeys.active'),
  });

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

  const flushTimer = setInterval(() => void flushLastUses(), options.flushMs ?? LAST_USED_FLUSH_MS);
  flushTimer.unref();

  return {
    firstRead: reads.firstRead,
    async stop() {
      reads.stop();
      clearInterval(flushTimer);
      await flushLastUses();
    },
  };
}
