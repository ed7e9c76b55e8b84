import type { IncomingMessage } from 'node:http';

/**
 * CORS for browser apps on other origins (CORS_ORIGINS), decided here from the configuration and
 * the request alone; the listener only writes what these functions return. No credentials mode:
 * keys travel in Authorization, which a page sets itself, so cookies are never asked for.
 */

/** What a page may send: the API's own request headers, and those Apollo Client and tracing add. */
const ALLOWED_REQUEST_HEADERS = [
  'Accept',
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-None-Match',
  'X-Request-Id',
  'Mcp-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
  'apollographql-client-name',
  'apollographql-client-version',
  'apollo-require-preflight',
  'x-apollo-operation-name',
  'traceparent',
  'tracestate',
].join(', ');

/** What page code may read of an answer beyond the CORS-safelisted headers (Content-Type, Cache-Control, ...). */
const EXPOSED_RESPONSE_HEADERS = [
  'Link',
  'ETag',
  'Location',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Idempotent-Replayed',
  'X-Request-Id',
  'Allow',
  'WWW-Authenticate',
].join(', ');

/**
 * Two hours, the most Chromium keeps a preflight. Longer is safe: every actual answer names its
 * origin again, so an origin taken off the list is refused at once; only the lists above could be
 * stale, and they change with a release.
 */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200;

/** Why an entry of CORS_ORIGINS is not an origin as browsers send it; undefined when it is one. */
export function originProblem(entry: string): string | undefined {
  // Never repeated, whatever else is wrong with it: an entry with `@` may carry a password.
  if (entry.includes('@')) return 'an origin carries no user or password';
  if (entry === '*' || entry === 'null') return `"${entry}" is not allowed: list each origin exactly`;
  if (!URL.canParse(entry)) return `"${entry}" is not an origin such as https://app.example.com`;
  const url = new URL(entry);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `"${entry}" must start with http:// or https://`;
  if (url.search || url.hash || entry.endsWith('/') || url.pathname !== '/') {
    return `"${entry}" must be scheme://host[:port], with no path or query`;
  }
  // Browsers send the serialised origin (lower case, default port left out): only that can match.
  if (url.origin !== entry) return `"${entry}" must be written as browsers send it: ${url.origin}`;
  return undefined;
}

export interface CorsPolicy {
  readonly origins: ReadonlySet<string>;
}

/** The policy for the configured origins; undefined (CORS off) when there are none. */
export function createCorsPolicy(origins: readonly string[]): CorsPolicy | undefined {
  return origins.length === 0 ? undefined : { origins: new Set(origins) };
}

/**
 * The request's Origin when the policy lists it. Anything else (no Origin, `null`, two Origin
 * headers joined by Node, any other string) is not matched: one Set lookup, bounded by the header
 * size limit Node applies to every request.
 */
export function allowedOrigin(policy: CorsPolicy | undefined, req: IncomingMessage): string | undefined {
  const origin = req.headers.origin;
  return policy !== undefined && origin !== undefined && policy.origins.has(origin) ? origin : undefined;
}

/**
 * On a route that refuses other origins (MCP's rule against DNS rebinding): 403 when a page from an
 * origin the policy does not list calls it; requests without Origin (no browser) pass.
 */
export function originRefusal(policy: CorsPolicy | undefined, req: IncomingMessage, path: string) {
  const origin = req.headers.origin;
  if (origin === undefined || allowedOrigin(policy, req) !== undefined) return undefined;
  const named = JSON.stringify(origin.length > 64 ? `${origin.slice(0, 64)}…` : origin);
  const message = `Pages from ${named} may not call ${path}: an operator adds their origin to CORS_ORIGINS`;
  return { status: 403, code: 'FORBIDDEN', message };
}

/** A CORS preflight (Fetch standard): OPTIONS naming the method the page means to send. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}

/** Headers every actual answer to an allowed origin carries, whatever its status. */
export function actualResponseHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': EXPOSED_RESPONSE_HEADERS,
    Vary: 'Origin',
  };
}

/** The 204 preflight answer's headers; `methods` are the route's (the browser checks the one it wants). */
export function preflightHeaders(origin: string, methods: readonly string[]): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Methods': methods.join(', '),
    'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS,
    'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
    Vary: 'Origin',
  };
}
