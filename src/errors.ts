/** How long a client is told to wait before retrying after a 503 (database, drain, a client that left). */
export const RETRY_AFTER_SECONDS = 5;

/**
 * What can go wrong below the API layers, without GraphQL, HTTP or driver types; the GraphQL layer gives
 * each a code and status. `expected` errors are operating conditions (logged without a stack), not bugs.
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  abstract readonly expected: boolean;
  /** The client's request is at fault (a 4xx): its access-log line says all there is to say. */
  readonly byClient: boolean = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** After a write refused for lack of storage: space comes back when someone frees it, not within seconds. */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 30;

/** The database did not answer in time or cannot be reached; retrying later may work. */
export class DatabaseUnavailableError extends DomainError {
  readonly code = 'SERVICE_UNAVAILABLE';
  readonly expected = true;
  /** Seconds a client should wait before retrying. */
  readonly retryAfterSeconds: number = RETRY_AFTER_SECONDS;
  /** Counted as the database being out of reach (a metric); contention is not an outage. */
  readonly outage: boolean = true;

  constructor(options?: { cause?: unknown }, message = 'The database is unavailable; try again shortly') {
    super(message, options);
  }
}

/** The database's disk (or quota) is full: reads work, writes answer 503 with a longer Retry-After. */
export class StorageFullError extends DatabaseUnavailableError {
  override readonly retryAfterSeconds: number = STORAGE_FULL_RETRY_AFTER_SECONDS;

  constructor(options?: { cause?: unknown }) {
    super(options, 'The database cannot store anything right now; reads still work, try again later');
  }
}

/** The client left while its work waited: the work was dropped, so a retry finds no copy stored behind its back. */
export class ClientGoneError extends DomainError {
  readonly code = 'CLIENT_CLOSED_REQUEST';
  readonly expected = true;

  constructor() {
    super('The client went away before its request ran; nothing was done');
  }
}

/** The stored pet with this id does not fit the domain's shape: only it fails; `problem` is for the log. */
export class CorruptPetError extends DomainError {
  readonly code = 'INTERNAL_SERVER_ERROR';
  readonly expected = false;

  constructor(
    readonly petId: number,
    readonly problem: string,
  ) {
    super(`Pet ${petId} is stored in a form this service cannot read`);
  }
}

/** A pet already has the id an idempotent create allocated for itself: its own earlier insert, or a collision. */
export class PetIdTakenError extends DomainError {
  readonly code = 'INTERNAL_SERVER_ERROR';
  readonly expected = false;

  constructor(readonly petId: number) {
    super(`pet id ${petId} is already taken`);
  }
}

/** Every id a create was given was taken (a non-atomic counter shared by instances): nothing stored, a 503 to retry. */
export class PetIdsContendedError extends DatabaseUnavailableError {
  override readonly retryAfterSeconds: number = 1;
  override readonly outage: boolean = false;

  constructor(readonly attempts: number) {
    super(
      undefined,
      'Pet ids are contended by concurrent creates; nothing was stored: retry (with the same Idempotency-Key, if any)',
    );
  }
}

/** An Idempotency-Key already used, within its retention, for a request with another body (422). */
export class IdempotencyKeyReusedError extends DomainError {
  readonly code = 'IDEMPOTENCY_KEY_REUSED';
  readonly expected = true;
  override readonly byClient = true;

  constructor() {
    super('This Idempotency-Key was already used with a different request body; use a new key for a new request');
  }
}

/** The first request with this Idempotency-Key has not finished yet (409): retry after a moment. */
export class IdempotencyKeyInUseError extends DomainError {
  readonly code = 'IDEMPOTENCY_KEY_IN_USE';
  readonly expected = true;
  override readonly byClient = true;

  constructor(readonly retryAfterSeconds: number) {
    super('A request with this Idempotency-Key is still being processed; retry after it finishes');
  }
}

/** The request's Idempotency-Key header is not one a create can be keyed by (400). */
export class InvalidIdempotencyKeyError extends DomainError {
  readonly code = 'BAD_USER_INPUT';
  readonly expected = true;
  override readonly byClient = true;

  constructor(readonly reason: string) {
    super(`Invalid value for "Idempotency-Key": ${reason}`);
  }
}
