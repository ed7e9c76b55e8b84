import type { Logger } from 'pino';
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET } from '../deprecations.ts';

export function deprecationHeaders(basePath: string): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(GET_PET_DEPRECATED_AT.getTime() / 1000)}`,
    Sunset: GET_PET_SUNSET.toUTCString(),
    Link: `<${basePath}/pets>; rel="successor-version", <${basePath}/openapi.json>; rel="deprecation"; type="application/json"`,
  };
}

/** One log line per key per operation per hour at most: enough to know who must migrate, not a flood. */
export const DEPRECATED_USE_LOG_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Counts uses of deprecated operations per API key, so operators know who must migrate. The first
 * use by a key is logged at once; later ones are summed into at most one line per hour.
 */
export function createDeprecationTracker(logger: Logger, now: () => number = Date.now) {
  const tallies = new Map<string, { sinceLastLine: number; total: number; loggedAt: number }>();
  return (operationId: string, keyId: string, reqId: string): void => {
    const key = `${operationId} ${keyId}`;
    let tally = tallies.get(key);
    if (!tally) {
      tally = { sinceLastLine: 0, total: 0, loggedAt: Number.NEGATIVE_INFINITY };
      tallies.set(key, tally);
    }
    tally.sinceLastLine += 1;
    tally.total += 1;
    if (now() - tally.loggedAt < DEPRECATED_USE_LOG_INTERVAL_MS) return;
    logger.warn(
      {
        event: 'deprecated_operation_used',
        reqId,
        operationId,
        keyId,
        uses: tally.sinceLastLine,
        total: tally.total,
        sunset: GET_PET_SUNSET.toISOString(),
      },
      `deprecated operation ${operationId} used by ${keyId}: ${tally.sinceLastLine} uses since the last line (${tally.total} since start)`,
    );
    tally.sinceLastLine = 0;
    tally.loggedAt = now();
  };
}
