import type { Logger } from 'pino';
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET } from '../deprecations.ts';

export function deprecationHeaders(basePath: string): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(GET_PET_DEPRECATED_AT.getTime() / 1000)}`,
    Sunset: GET_PET_SUNSET.toUTCString(),
    Link: `<${basePath}/pets>; rel="successor-version", <${basePath}/openapi.json>; rel="deprecation"; type="application/json"`,
  };
}

/** Counts uses of deprecated operations per API key, in the logs, so operators know who must migrate. */
export function createDeprecationTracker(logger: Logger) {
  const uses = new Map<string, number>();
  return (operationId: string, keyId: string): void => {
    const key = `${operationId} ${keyId}`;
    const count = (uses.get(key) ?? 0) + 1;
    uses.set(key, count);
    logger.warn(
      { event: 'deprecated_operation_used', operationId, keyId, uses: count, sunset: GET_PET_SUNSET.toISOString() },
      `deprecated operation ${operationId} used by ${keyId} (${count} uses since start)`,
    );
  };
}
