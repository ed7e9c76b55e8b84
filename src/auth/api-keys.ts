import { createHash, timingSafeEqual } from 'node:crypto';

export type Authentication = { ok: true; keyId: string } | { ok: false; keyWasSent: boolean };

export type ApiKeyVerifier = (authorization: string | null) => Authentication;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** A short, stable, non-secret name for a key, safe to log and to count usage by. */
function keyIdOf(key: string): string {
  return `key_${sha256(key).toString('hex').slice(0, 12)}`;
}

// RFC 6750 §2.1: the scheme is case-insensitive, the token is token68.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** Headers that authenticated recently; bounded, as every entry is a valid key's header. */
const MAX_REMEMBERED = 1_024;

/**
 * Keys are compared as SHA-256 digests: equal lengths make timingSafeEqual usable, and every
 * configured key is compared so the time taken does not reveal which one nearly matched. A header
 * that matched is remembered as it was sent, so a client's next requests skip the hashing (a few
 * per cent of a request); only matches are remembered, so wrong keys cannot fill the memory, and
 * a lookup tells nothing to someone who does not already hold the exact key.
 */
export function createApiKeyVerifier(keys: readonly string[]): ApiKeyVerifier {
  const known = keys.map((key) => ({ digest: sha256(key), keyId: keyIdOf(key) }));
  const remembered = new Map<string, Authentication>();
  return (authorization) => {
    if (!authorization) return { ok: false, keyWasSent: false };
    const seen = remembered.get(authorization);
    if (seen) return seen;
    const token = BEARER.exec(authorization)?.[1];
    if (!token) return { ok: false, keyWasSent: true };
    const presented = sha256(token);
    let match: string | undefined;
    for (const { digest, keyId } of known) {
      if (timingSafeEqual(digest, presented)) match = keyId;
    }
    if (!match) return { ok: false, keyWasSent: true };
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    const authentication: Authentication = { ok: true, keyId: match };
    remembered.set(authorization, authentication);
    return authentication;
  };
}
