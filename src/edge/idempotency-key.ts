import type { IncomingMessage } from 'node:http';

/** Stripe's limit; the IETF draft sets none. Longer keys are refused, not cut. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** The OpenAPI document's pattern: printable ASCII, no space at either end. */
const VISIBLE_ASCII = /^[!-~]([ -~]*[!-~])?$/;

export type IdempotencyKeyHeader = { key?: string } | { problem: string };

/**
 * The Idempotency-Key of a POST, if it sent one. The IETF draft makes the value a structured-field
 * string (`"8e03…"`); Stripe's clients send it bare. Both are taken: quotes and their escapes are
 * removed. An empty or over-long key is a client error (400), never silently ignored.
 */
export function idempotencyKeyOf(req: IncomingMessage): IdempotencyKeyHeader {
  if (req.method !== 'POST') return {};
  // Node joins repeated fields with ", ", which would make two keys one: each value is looked at apart.
  const sent = req.headersDistinct['idempotency-key'];
  if (sent === undefined) return {};
  if (sent.length > 1) return { problem: 'must be sent once' };
  const value = (sent[0] ?? '').trim();
  const key = /^"(?:[^"\\]|\\[\\"])*"$/.test(value) ? value.slice(1, -1).replace(/\\([\\"])/g, '$1') : value;
  if (key.length === 0) return { problem: 'must not be empty' };
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    return { problem: `must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters (got ${key.length})` };
  }
  if (!VISIBLE_ASCII.test(key)) return { problem: 'must be visible ASCII characters (spaces allowed inside)' };
  return { key };
}
