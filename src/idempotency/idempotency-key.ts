/** Stripe's limit; the IETF draft sets none. Longer keys are refused, not cut. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** The OpenAPI document's pattern: printable ASCII, no space at either end. */
const VISIBLE_ASCII = /^[!-~]([ -~]*[!-~])?$/;
const QUOTED = /^"(?:[^"\\]|\\[\\"])*"$/;

export type IdempotencyKeyHeader = { key?: string; problem?: never } | { key?: never; problem: string };

/**
 * The Idempotency-Key a request sent, from each value of the header apart. The IETF draft makes it a
 * structured-field string (`"8e03…"`), Stripe's clients send it bare: both are taken. An empty,
 * repeated or over-long key is a client error (400), never silently ignored.
 */
export function idempotencyKeyOf(values: readonly string[] | undefined): IdempotencyKeyHeader {
  if (values === undefined) return {};
  if (values.length > 1) return { problem: 'must be sent once' };
  const value = (values[0] ?? '').trim();
  const key = QUOTED.test(value) ? value.slice(1, -1).replace(/\\([\\"])/g, '$1') : value;
  if (key.length === 0) return { problem: 'must not be empty' };
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    return { problem: `must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters (got ${key.length})` };
  }
  if (!VISIBLE_ASCII.test(key)) return { problem: 'must be visible ASCII characters (spaces allowed inside)' };
  return { key };
}
