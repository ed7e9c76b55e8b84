import { describe, expect, it } from 'vitest';
import { createDeprecationTracker, DEPRECATED_USE_LOG_INTERVAL_MS } from '../src/rest/deprecation.ts';
import { capturingLogger } from './support/capturing-logger.ts';

describe('deprecated-use log lines', () => {
  it('logs the first use by a key at once, then at most one line per key per hour with the count', () => {
    const { logger, lines } = capturingLogger();
    let clock = 1_000_000;
    const track = createDeprecationTracker(logger, () => clock);

    for (let use = 0; use < 500; use++) track('getPet', 'key_a', 'req-a');
    track('getPet', 'key_b', 'req-b');
    // Each line names the request that wrote it.
    expect(lines.map(({ keyId, uses, reqId }) => [keyId, uses, reqId])).toEqual([
      ['key_a', 1, 'req-a'],
      ['key_b', 1, 'req-b'],
    ]);

    clock += DEPRECATED_USE_LOG_INTERVAL_MS;
    track('getPet', 'key_a', 'req-a');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ event: 'deprecated_operation_used', keyId: 'key_a', uses: 500, total: 501 });
  });
});
