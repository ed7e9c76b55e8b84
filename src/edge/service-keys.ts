import type { Logger } from 'pino';
import { type IssuedKeySource, type KeyRing, syncIssuedKeys } from '../auth/api-keys.ts';
import type { Config } from '../config.ts';
import type { KeyGone } from '../http/stream-outcomes.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { AuthenticationOptions } from './authenticate.ts';
import { clientAddressOf } from './client-address.ts';
import type { RateLimits } from './rate-limits.ts';

export interface ServiceKeysOptions {
  config: Pick<Config, 'TRUST_PROXY'>;
  stores: { issuedKeys: IssuedKeySource };
  logger: Logger;
  metrics: Metrics;
}

/**
 * The ring's issued keys kept in step with the store, and what checks a key: the edge and WebSockets.
 * A key that goes (revoked, expired) is handed to `onKeysGone`, which ends its open streams.
 */
export function createServiceKeys(
  { config, stores, logger, metrics }: ServiceKeysOptions,
  keyRing: KeyRing,
  rateLimits: RateLimits,
  onKeysGone: (keyIds: string[], why: KeyGone) => void,
) {
  const keySync = syncIssuedKeys({
    ring: keyRing,
    store: stores.issuedKeys,
    logger,
    onDatabaseError: metrics.countDatabaseError,
    onKeysGone,
  });
  const keyCheck: AuthenticationOptions = {
    verifyApiKey: keyRing.verify,
    rateLimits,
    metrics,
    clientAddress: clientAddressOf(config.TRUST_PROXY),
  };
  return { keySync, keyCheck };
}
