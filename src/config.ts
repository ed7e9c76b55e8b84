import { z } from 'zod';
import { trustedProxyProblem } from './edge/client-address.ts';
import { originProblem } from './edge/cors.ts';
import { DEFAULT_IDEMPOTENCY_RETENTION_HOURS } from './idempotency/idempotent-create.ts';

/** pino's levels, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const commaList = (raw: string) =>
  raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);

const apiKeyList = z
  .string()
  .transform(commaList)
  .pipe(
    z.array(
      z
        .string()
        .min(16, 'each key needs at least 16 characters')
        // RFC 6750 token68: what a Bearer header can carry, so every accepted key can log in.
        .regex(/^[A-Za-z0-9\-._~+/]+=*$/, 'keys may use letters, digits and - . _ ~ + / (then = padding)'),
    ),
  );

// Addresses, CIDR ranges and proxy-addr's names (loopback, linklocal, uniquelocal), as Express takes them.
const trustedProxies = z
  .string()
  .transform(commaList)
  .superRefine((entries, context) => {
    for (const entry of entries) {
      const problem = trustedProxyProblem(entry);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    }
  });

/** Longest REST_BASE_PATH: the OpenAPI document's header maxLengths (Location, Link) are computed from it. */
export const REST_BASE_PATH_MAX_LENGTH = 64;
/** Most CORS_ORIGINS entries: far more than the browser apps one API serves. */
export const CORS_ORIGINS_MAX_COUNT = 50;
/** `https://`, a DNS name (253 characters and a trailing dot) and `:65535`: every origin a browser can reach. */
export const CORS_ORIGIN_MAX_LENGTH = 'https://'.length + 254 + ':65535'.length;
const ORIGIN_TOO_LONG = `an origin has at most ${CORS_ORIGIN_MAX_LENGTH} characters`;

// Browser apps' origins, exactly as browsers send them in Origin (no wildcard: each is named).
const corsOrigins = z
  .string()
  .transform(commaList)
  .pipe(z.array(z.string()).max(CORS_ORIGINS_MAX_COUNT, `at most ${CORS_ORIGINS_MAX_COUNT} origins`))
  .superRefine((entries, context) => {
    entries.forEach((entry, index) => {
      // Too long to repeat in a message, and refused before any parsing.
      const problem = entry.length > CORS_ORIGIN_MAX_LENGTH ? ORIGIN_TOO_LONG : originProblem(entry);
      if (problem) context.addIssue({ code: 'custom', message: problem, path: [index] });
    });
  });

const wholeNumber = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

// The message never repeats the value: a URL may carry a password.
const redisUrl = z
  .string()
  .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
  .refine((value) => URL.canParse(value), 'must be a URL such as redis://host:6379');

const envSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: wholeNumber(0, 65535).default(4000),
    HOST: z.string().min(1).default('127.0.0.1'),
    API_KEYS: apiKeyList.default([]),
    MONGODB_URI: z
      .string()
      .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
      .optional(),
    MONGODB_DB: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,63}$/, 'letters, digits, _ and - only, at most 63 characters')
      .default('petstore'),
    DATA_DIR: z.string().min(1).default('.data'),
    // The embedded FerretDB (no MONGODB_URI) has no authentication, replication or backups: with
    // NODE_ENV=production it starts only when this says `allow`, so that nobody runs it there by accident.
    EMBEDDED_DATABASE_IN_PRODUCTION: z.enum(['allow']).optional(),
    LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
    REST_BASE_PATH: z
      .string()
      .max(REST_BASE_PATH_MAX_LENGTH, `at most ${REST_BASE_PATH_MAX_LENGTH} characters (a path such as /v1)`)
      .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'a path such as /v1, without a trailing slash')
      .default('/v1'),
    MAX_BODY_BYTES: wholeNumber(1024, 10_485_760).default(16_384),
    // A generous query with variables is a few KB.
    MAX_GRAPHQL_BODY_BYTES: wholeNumber(1024, 10_485_760).default(65_536),
    SHUTDOWN_TIMEOUT_MS: wholeNumber(0, 600_000).default(10_000),
    // Unset: 5 s in production (about two health-check intervals of a balancer), 0 elsewhere.
    SHUTDOWN_DELAY_MS: wholeNumber(0, 600_000).optional(),
    // Above common balancers' idle timeouts (AWS ALB 60 s), so the balancer closes idle connections first.
    KEEP_ALIVE_TIMEOUT_MS: wholeNumber(1_000, 3_600_000).default(65_000),
    // Below 100 the REST list route (limit up to 100) would trip it.
    MAX_GRAPHQL_LIST_ITEMS: wholeNumber(100, 100_000).default(500),
    // Requests per second per key and the most in one second; failed authentications per address. 0 turns one off.
    RATE_LIMIT_PER_KEY: wholeNumber(0, 1_000_000).default(100),
    RATE_LIMIT_BURST: wholeNumber(0, 1_000_000).default(200),
    AUTH_FAILURE_LIMIT: wholeNumber(0, 1_000_000).default(10),
    AUTH_FAILURE_BURST: wholeNumber(0, 1_000_000).default(20),
    // Set: the per-key and failed-authentication limits count in Redis, shared by every instance using it.
    REDIS_URL: redisUrl.optional(),
    // Unset: the client address is the socket's peer. Set: the proxies whose X-Forwarded-For is believed.
    TRUST_PROXY: trustedProxies.default([]),
    // Unset: no CORS, as before. Set: these origins' pages may call /graphql and the REST routes.
    CORS_ORIGINS: corsOrigins.default([]),
    // Who may send GraphQL documents of their own: everyone (off), everyone but logged (log), or only
    // API_KEYS keys and keys issued with --allow-arbitrary-documents (enforce). Ids work in every mode.
    TRUSTED_DOCUMENTS: z.enum(['off', 'log', 'enforce']).default('off'),
    // Unset: /metrics is on PORT behind the API key. Set: only there, without a key, for a private network.
    METRICS_PORT: wholeNumber(0, 65535).optional(),
    METRICS_HOST: z.string().min(1).optional(),
    // Subscription streams (GraphQL over SSE) one API key may hold open on one instance, and the instance in all.
    MAX_SUBSCRIPTIONS_PER_KEY: wholeNumber(1, 100_000).default(10),
    MAX_SUBSCRIPTIONS: wholeNumber(1, 1_000_000).default(1_000),
    // How often every subscriber looks again without a notification: what a lost one costs at most.
    SUBSCRIPTION_POLL_MS: wholeNumber(100, 600_000).default(5_000),
    // How long pets beyond a missing id are held back for it (ids are taken before the insert).
    SUBSCRIPTION_SETTLE_MS: wholeNumber(0, 600_000).default(2_000),
    // WebSocket pings: below proxies' idle timeouts; a peer that has not answered one by the next is cut.
    WEBSOCKET_PING_MS: wholeNumber(100, 60_000).default(12_000),
    // Unauthenticated WebSockets (3 s each at most) per instance (503) and per address (429); an address's upgrades/s.
    MAX_PENDING_WEBSOCKETS: wholeNumber(1, 1_000_000).default(100),
    MAX_PENDING_WEBSOCKETS_PER_ADDRESS: wholeNumber(1, 1_000_000).default(10),
    WEBSOCKET_UPGRADE_LIMIT: wholeNumber(0, 1_000_000).default(10),
    WEBSOCKET_UPGRADE_BURST: wholeNumber(0, 1_000_000).default(30),
    // Webhooks: the waits between attempts, in seconds (Standard Webhooks' schedule over about 3 days by default).
    WEBHOOK_RETRY_SCHEDULE: z
      .string()
      .transform(commaList)
      .pipe(
        z
          .array(
            z
              .string()
              .regex(/^\d{1,6}$/, 'waits are whole seconds, each at most 7 days')
              .transform(Number),
          )
          .min(1, 'at least one wait')
          .max(20, 'at most 20 waits'),
      )
      .refine((waits) => waits.every((seconds) => seconds <= 7 * 86_400), 'each wait is at most 7 days')
      .optional(),
    // Set to true (tests, intranets): targets on loopback, private or link-local addresses are allowed.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true'),
    WEBHOOK_TIMEOUT_MS: wholeNumber(100, 60_000).default(10_000),
    WEBHOOK_MAX_CONCURRENT: wholeNumber(1, 10_000).default(50),
    IDEMPOTENCY_RETENTION_HOURS: wholeNumber(1, 24 * 30).default(DEFAULT_IDEMPOTENCY_RETENTION_HOURS),
  })
  .transform((env) => ({
    ...env,
    SHUTDOWN_DELAY_MS: env.SHUTDOWN_DELAY_MS ?? (env.NODE_ENV === 'production' ? 5_000 : 0),
  }));

export type Config = z.output<typeof envSchema>;

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** The variable an issue is about, and which entry of a comma list (`API_KEYS (entry 2)`). */
function variableOf([variable, entry]: PropertyKey[]): string {
  if (variable === undefined) return 'environment';
  return typeof entry === 'number' ? `${String(variable)} (entry ${entry + 1})` : String(variable);
}

/** Reads the environment once; reports every bad variable at the same time so one restart fixes all. */
export function loadConfig(env: NodeJS.ProcessEnv): ConfigResult {
  // An empty variable means "unset", as in most shells' `FOO= cmd`.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${variableOf(issue.path)}: ${issue.message}`);
    return { ok: false, problems };
  }
  const config = parsed.data;
  const problems: string[] = [];
  if (config.METRICS_PORT !== undefined && config.METRICS_PORT === config.PORT && config.PORT !== 0) {
    problems.push('METRICS_PORT: must differ from PORT (it serves /metrics without a key)');
  }
  if (config.RATE_LIMIT_PER_KEY > 0 && config.RATE_LIMIT_BURST < config.RATE_LIMIT_PER_KEY) {
    problems.push('RATE_LIMIT_BURST: must be at least RATE_LIMIT_PER_KEY (a burst is the most in one second)');
  }
  if (config.AUTH_FAILURE_LIMIT > 0 && config.AUTH_FAILURE_BURST < config.AUTH_FAILURE_LIMIT) {
    problems.push('AUTH_FAILURE_BURST: must be at least AUTH_FAILURE_LIMIT (a burst is the most in one second)');
  }
  if (config.NODE_ENV === 'production' && !config.MONGODB_URI && config.EMBEDDED_DATABASE_IN_PRODUCTION !== 'allow') {
    problems.push(
      'MONGODB_URI: must be set when NODE_ENV=production (the embedded database has no authentication, ' +
        'replication or backups); to run it anyway, set EMBEDDED_DATABASE_IN_PRODUCTION=allow',
    );
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config };
}

/** A configuration from variables that must be valid (tests, the benchmark); throws listing the problems. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const loaded = loadConfig(env);
  if (!loaded.ok) throw new Error(`invalid configuration: ${loaded.problems.join('; ')}`);
  return loaded.config;
}

/** Every default, as the schema above applies it: for tests and tools that name one. */
export const DEFAULTS: Config = parseConfig({});
