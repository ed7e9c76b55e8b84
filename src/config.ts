import { z } from 'zod';

/** Largest GraphQL request body by default: a generous query with variables is a few KB. */
export const DEFAULT_MAX_GRAPHQL_BODY_BYTES = 65_536;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const apiKeyList = z
  .string()
  .transform((raw) =>
    raw
      .split(',')
      .map((key) => key.trim())
      .filter((key) => key.length > 0),
  )
  .pipe(
    z.array(
      z
        .string()
        .min(16, 'each key needs at least 16 characters')
        // RFC 6750 token68: what a Bearer header can carry, so every accepted key can log in.
        .regex(/^[A-Za-z0-9\-._~+/]+=*$/, 'keys may use letters, digits and - . _ ~ + / (then = padding)'),
    ),
  );

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
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
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  REST_BASE_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'a path such as /v1, without a trailing slash')
    .default('/v1'),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(10_485_760).default(16_384),
  MAX_GRAPHQL_BODY_BYTES: z.coerce.number().int().min(1024).max(10_485_760).default(DEFAULT_MAX_GRAPHQL_BODY_BYTES),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
});

export type Config = z.infer<typeof envSchema>;

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Reads the environment once; reports every bad variable at the same time so one restart fixes all. */
export function loadConfig(env: NodeJS.ProcessEnv): ConfigResult {
  // An empty variable means "unset", as in most shells' `FOO= cmd`.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`);
    return { ok: false, problems };
  }
  const config = parsed.data;
  if (config.NODE_ENV === 'production' && config.API_KEYS.length === 0) {
    return { ok: false, problems: ['API_KEYS: required when NODE_ENV=production (comma-separated bearer keys)'] };
  }
  return { ok: true, config };
}
