import type { components } from './__generated__/openapi.ts';

/** The contract's Error body: `{code, message, status}`, status equal to the HTTP status. */
export type ApiError = components['schemas']['Error'];
export type ErrorCode = ApiError['code'];

/**
 * A refused request. `code` is the Error body's (`BAD_USER_INPUT`, `UNAUTHENTICATED`, `FORBIDDEN`,
 * `PET_NOT_FOUND`, `RATE_LIMITED`, …) and undefined when the answer was no Error body (a proxy's page).
 */
export class RestClientError extends Error {
  override name = 'RestClientError';
  readonly code: ErrorCode | undefined;

  constructor(
    readonly status: number,
    readonly body: ApiError | undefined,
    /** `Retry-After` in seconds, on 429, 409 and 503 answers. */
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(body ? `${body.code}: ${body.message}` : `HTTP ${status} without an Error body`);
    this.code = body?.code;
  }
}

// The body comes from the network: its shape is checked before the type is believed.
function isApiError(body: unknown): body is ApiError {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message, status } = body as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string' && typeof status === 'number';
}

function retryAfterOf(response: Response): number | undefined {
  const value = response.headers.get('Retry-After');
  return value !== null && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

/** What openapi-fetch gave for a failed request, as one typed error. */
export function errorFrom(response: Response, body: unknown): RestClientError {
  return new RestClientError(response.status, isApiError(body) ? body : undefined, retryAfterOf(response));
}
