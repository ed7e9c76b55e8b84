import { describe, expect, it } from 'vitest';
import {
  CORS_ORIGIN_MAX_LENGTH,
  CORS_ORIGINS_MAX_COUNT,
  loadConfig,
  REST_BASE_PATH_MAX_LENGTH,
} from '../src/config.ts';

/** A well-formed path exactly `length` long: a slash every 16 characters, never a last one. */
function basePathOf(length: number): string {
  return Array.from({ length }, (_, at) => (at % 16 === 0 && at < length - 1 ? '/' : 's')).join('');
}

/** An origin exactly `length` long: https://, labels of at most 63 characters joined by dots, :65535. */
function originOf(length: number): string {
  const hostLength = length - 'https://'.length - ':65535'.length;
  const labels = Array.from({ length: Math.ceil(hostLength / 64) }, () => 'h'.repeat(63));
  return `https://${labels.join('.').slice(0, hostLength)}:65535`;
}

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

  it('says which entry of a comma list is bad, counting from 1', () => {
    expect(loadConfig({ API_KEYS: 'first-key-0123456789,short' })).toEqual({
      ok: false,
      problems: ['API_KEYS (entry 2): each key needs at least 16 characters'],
    });
  });

  it('takes production without API_KEYS: keys may be issued with `npm run keys` instead', () => {
    const result = loadConfig({ NODE_ENV: 'production', MONGODB_URI: 'mongodb://db.internal:27017' });
    expect(result.ok && result.config.API_KEYS).toEqual([]);
  });

  it('refuses production on the embedded database unless EMBEDDED_DATABASE_IN_PRODUCTION=allow says so', () => {
    expect(loadConfig({ NODE_ENV: 'production' })).toEqual({
      ok: false,
      problems: [expect.stringMatching(/^MONGODB_URI: must be set .*EMBEDDED_DATABASE_IN_PRODUCTION=allow/)],
    });
    expect(loadConfig({ NODE_ENV: 'production', EMBEDDED_DATABASE_IN_PRODUCTION: 'allow' }).ok).toBe(true);
    // Only the one word: a `true` or `yes` is a typo to report, not a permission to guess.
    const typo = loadConfig({ NODE_ENV: 'production', EMBEDDED_DATABASE_IN_PRODUCTION: 'yes' });
    expect(typo.ok ? [] : typo.problems).toEqual([expect.stringMatching(/^EMBEDDED_DATABASE_IN_PRODUCTION/)]);
    // Outside production the embedded database needs no permission.
    expect(loadConfig({ NODE_ENV: 'development' }).ok).toBe(true);
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

  it('takes REDIS_URL as a redis:// or rediss:// URL, and never repeats it in a problem (it may hold a password)', () => {
    const unset = loadConfig({});
    expect(unset.ok && unset.config.REDIS_URL).toBeUndefined();
    for (const url of ['redis://127.0.0.1:6379', 'rediss://user:pass@cache.internal:6380/2', 'redis://cache']) {
      const result = loadConfig({ REDIS_URL: url });
      expect(result.ok && result.config.REDIS_URL, url).toBe(url);
    }
    for (const url of ['http://user:s3cret@cache:6379', 'cache.internal:6379', 'redis://user:s3cret@cache host']) {
      const result = loadConfig({ REDIS_URL: url });
      expect(result.ok, url).toBe(false);
      const problems = result.ok ? [] : result.problems;
      expect(problems, url).toEqual([expect.stringMatching(/^REDIS_URL: /)]);
      expect(problems.join(), url).not.toContain('s3cret');
    }
  });

  it('takes TRUST_PROXY as comma-separated addresses, CIDR ranges and proxy-addr names; none by default', () => {
    const none = loadConfig({});
    expect(none.ok && none.config.TRUST_PROXY).toEqual([]);
    const result = loadConfig({ TRUST_PROXY: ' loopback, 10.0.0.0/8 ,::1, 192.168.0.0/255.255.0.0,uniquelocal' });
    expect(result.ok && result.config.TRUST_PROXY).toEqual([
      'loopback',
      '10.0.0.0/8',
      '::1',
      '192.168.0.0/255.255.0.0',
      'uniquelocal',
    ]);
    // Express's `true` and hop counts are not taken: trusting every hop would let any client pick its address.
    const bad = loadConfig({ TRUST_PROXY: 'true, 10.0.0.0/33, balancer.internal, loopback' });
    const problems = bad.ok ? [] : bad.problems;
    expect(problems).toHaveLength(3);
    expect(problems.every((problem) => problem.startsWith('TRUST_PROXY: '))).toBe(true);
    for (const entry of ['true', '10.0.0.0/33', 'balancer.internal']) {
      expect(
        problems.some((problem) => problem.includes(entry)),
        entry,
      ).toBe(true);
    }
  });

  it(`takes a REST_BASE_PATH of ${REST_BASE_PATH_MAX_LENGTH} characters and refuses one longer, saying the limit`, () => {
    const longest = basePathOf(REST_BASE_PATH_MAX_LENGTH);
    expect(longest).toHaveLength(REST_BASE_PATH_MAX_LENGTH);
    const taken = loadConfig({ REST_BASE_PATH: longest });
    expect(taken.ok && taken.config.REST_BASE_PATH).toBe(longest);
    // One segment or many: the length counts the whole path.
    for (const tooLong of [basePathOf(REST_BASE_PATH_MAX_LENGTH + 1), `/${'x'.repeat(REST_BASE_PATH_MAX_LENGTH)}`]) {
      expect(loadConfig({ REST_BASE_PATH: tooLong }), tooLong).toEqual({
        ok: false,
        problems: [`REST_BASE_PATH: at most ${REST_BASE_PATH_MAX_LENGTH} characters (a path such as /v1)`],
      });
    }
    // Too long and badly formed: both are said at once.
    const both = loadConfig({ REST_BASE_PATH: `${basePathOf(REST_BASE_PATH_MAX_LENGTH)}/` });
    expect(both.ok ? [] : both.problems).toEqual([
      expect.stringMatching(/^REST_BASE_PATH: at most /),
      'REST_BASE_PATH: a path such as /v1, without a trailing slash',
    ]);
  });

  it(`takes up to ${CORS_ORIGINS_MAX_COUNT} CORS_ORIGINS of up to ${CORS_ORIGIN_MAX_LENGTH} characters, and refuses more`, () => {
    const origins = (count: number) => Array.from({ length: count }, (_, index) => `https://app${index}.example.com`);
    const most = loadConfig({ CORS_ORIGINS: origins(CORS_ORIGINS_MAX_COUNT).join(',') });
    expect(most.ok && most.config.CORS_ORIGINS).toEqual(origins(CORS_ORIGINS_MAX_COUNT));
    expect(loadConfig({ CORS_ORIGINS: origins(CORS_ORIGINS_MAX_COUNT + 1).join(',') })).toEqual({
      ok: false,
      problems: [`CORS_ORIGINS: at most ${CORS_ORIGINS_MAX_COUNT} origins`],
    });
    // The longest origin taken: a host as long as a DNS name with its trailing dot (254), and a port.
    const longest = originOf(CORS_ORIGIN_MAX_LENGTH);
    expect(longest).toMatch(/^https:\/\/[a-z.]{254}:65535$/);
    const taken = loadConfig({ CORS_ORIGINS: `https://app.example.com,${longest}` });
    expect(taken.ok && taken.config.CORS_ORIGINS).toEqual(['https://app.example.com', longest]);
    const tooLong = `https://${'h'.repeat(CORS_ORIGIN_MAX_LENGTH)}`;
    const refused = loadConfig({ CORS_ORIGINS: `https://app.example.com,${tooLong}` });
    expect(refused).toEqual({
      ok: false,
      problems: [`CORS_ORIGINS (entry 2): an origin has at most ${CORS_ORIGIN_MAX_LENGTH} characters`],
    });
  });

  it('treats an empty variable as unset', () => {
    const result = loadConfig({ PORT: '', MONGODB_URI: '' });
    expect(result.ok && result.config.PORT).toBe(4000);
    expect(result.ok && result.config.MONGODB_URI).toBeUndefined();
  });
});
