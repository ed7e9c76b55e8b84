import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';

describe('configuration from the environment', () => {
  it('has the documented defaults', () => {
    const result = loadConfig({});
    expect(result).toEqual({
      ok: true,
      config: expect.objectContaining({
        PORT: 4000,
        MONGODB_DB: 'petstore',
        DATA_DIR: '.data',
        REST_BASE_PATH: '/v1',
        MAX_BODY_BYTES: 16384,
        API_KEYS: [],
      }),
    });
  });

  it('splits and trims API_KEYS', () => {
    const result = loadConfig({ API_KEYS: ' first-key-0123456789 , second-key-0123456789,' });
    expect(result.ok && result.config.API_KEYS).toEqual(['first-key-0123456789', 'second-key-0123456789']);
  });

  it('names every bad variable at once', () => {
    const result = loadConfig({ PORT: 'eighty', MONGODB_URI: 'http://nope', LOG_LEVEL: 'loud', API_KEYS: 'short' });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    for (const variable of ['PORT', 'MONGODB_URI', 'LOG_LEVEL', 'API_KEYS']) {
      expect(problems.some((problem) => problem.startsWith(variable))).toBe(true);
    }
  });

  it('takes production without API_KEYS: keys may be issued with `npm run keys` instead', () => {
    const result = loadConfig({ NODE_ENV: 'production' });
    expect(result.ok && result.config.API_KEYS).toEqual([]);
  });

  it('refuses a METRICS_PORT equal to PORT, and takes the retention of Idempotency-Keys in hours', () => {
    expect(loadConfig({ PORT: '4000', METRICS_PORT: '4000' })).toEqual({
      ok: false,
      problems: [expect.stringContaining('METRICS_PORT')],
    });
    const result = loadConfig({ METRICS_PORT: '9464', IDEMPOTENCY_RETENTION_HOURS: '48' });
    expect(result.ok && [result.config.METRICS_PORT, result.config.IDEMPOTENCY_RETENTION_HOURS]).toEqual([9464, 48]);
    expect(loadConfig({ IDEMPOTENCY_RETENTION_HOURS: '0' }).ok).toBe(false);
  });

  it('treats an empty variable as unset', () => {
    const result = loadConfig({ PORT: '', MONGODB_URI: '' });
    expect(result.ok && result.config.PORT).toBe(4000);
    expect(result.ok && result.config.MONGODB_URI).toBeUndefined();
  });
});
