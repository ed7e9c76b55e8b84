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

/**
 * Keys are compared as SHA-256 digests: equal lengths make timingSafeEqual usable, and every
 * configured key is compared so the time taken does not reveal which one nearly matched.
 */
export function createApiKeyVerifier(keys: readonly string[]): ApiKeyVerifier {
  const known = keys.map((key) => ({ digest: sha256(key), keyId: keyIdOf(key) }));
  return (authorization) => {
    if (!authorization) return { ok: false, keyWasSent: false };
    const token = BEARER.exec(authorization)?.[1];
    if (!token) return { ok: false, keyWasSent: true };
    const presented = sha256(token);
    let match: string | undefined;
    for (const { digest, keyId } of known) {
      if (timingSafeEqual(digest, presented)) match = keyId;
    }
    return match ? { ok: true, keyId: match } : { ok: false, keyWasSent: true };
  };
}
