/**
 * Domain errors: what can go wrong below the API layers, named without GraphQL, HTTP or driver
 * types. The repository turns driver errors into these; the GraphQL layer gives each a code and an
 * HTTP status. `expected` errors are operating conditions (logged without a stack), not bugs.
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  abstract readonly expected: boolean;
}

/** The database did not answer in time or cannot be reached; retrying later may work. */
export class DatabaseUnavailableError extends DomainError {
  readonly code = 'SERVICE_UNAVAILABLE';
  readonly expected = true;
  /** Seconds a client should wait before retrying. */
  readonly retryAfterSeconds = 5;

  constructor(options?: { cause?: unknown }) {
    super('The database is unavailable; try again shortly', options);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Every id the counter handed out was taken: a bug or a badly broken counter, not a client error. */
export class IdAllocationError extends DomainError {
  readonly code = 'INTERNAL_SERVER_ERROR';
  readonly expected = false;

  constructor(attempts: number) {
    super(`could not allocate a unique pet id in ${attempts} attempts`);
    this.name = 'IdAllocationError';
  }
}
