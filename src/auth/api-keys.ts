import type { Logger } from 'pino';
import { startRefreshLoop } from '../db/refresh-loop.ts';
import type { HttpError } from '../http/send-json.ts';
import type { KeyGone } from '../http/stream-outcomes.ts';
import { type ActiveKey, type ApiKeyStore, sha256Hex } from './api-key-store.ts';
import { EVERY_SCOPE, type Scope, type Scopes } from './scopes.ts';

export type Authentication =
  | { ok: true; keyId: string; arbitraryDocuments: boolean; scopes: Scopes }
  | { ok: false; keyWasSent: boolean };

export type ApiKeyVerifier = (authorization: string | null) => Authentication;

/** Why a key was not admitted: the error (401 or 429) and the headers its answer carries. */
export interface KeyRefusal {
  error: HttpError;
  headers: Record<string, string>;
}

/**
 * RFC 6750 §3: name the scheme; flag a key that was sent but is wrong. The edge answers it, and a
 * subscription whose key went while its request arrived (subscriptions/follow-pets.ts).
 */
export function unauthenticated(keyWasSent: boolean, headers?: Record<string, string>): KeyRefusal {
  const challenge = keyWasSent ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"';
  const message = keyWasSent
    ? 'The API key is not valid'
    : 'An API key is required: send "Authorization: Bearer <API_KEY>"';
  const error = { status: 401, code: 'UNAUTHENTICATED', message };
  return { error, headers: { ...headers, 'WWW-Authenticate': challenge } };
}

/** A key the service accepts: its id, and when it stops working (null: never). */
interface KnownKey {
  keyId: string;
  expiresAt: number | null;
  /** Issued keys have a record whose last use is kept; API_KEYS keys have none. */
  issued: boolean;
  /** May send GraphQL documents of its own under TRUSTED_DOCUMENTS=enforce: API_KEYS keys always may. */
  arbitraryDocuments: boolean;
  /** What it may do: every scope for API_KEYS keys. One set per key, shared by its requests. */
  scopes: Scopes;
}

/** A short, stable, non-secret name for a key from API_KEYS, safe to log and to count usage by. */
export function configuredKeyId(key: string): string {
  return `key_${sha256Hex(key).slice(0, 12)}`;
}

// RFC 6750 §2.1: the scheme is case-insensitive, the token is token68.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** Headers that authenticated recently; bounded, as every entry is a valid key's header. */
const MAX_REMEMBERED = 1_024;

/** The issued keys as last read, as their records say: by digest for requests, by id for streams asking again. */
function indexIssued(keys: readonly ActiveKey[]) {
  const byDigest = new Map<string, KnownKey>();
  const byId = new Map<string, KnownKey>();
  for (const key of keys) {
    const known: KnownKey = {
      keyId: key.id,
      expiresAt: key.expiresAt?.getTime() ?? null,
      issued: true,
      arbitraryDocuments: key.allowArbitraryDocuments,
      scopes: new Set(key.scopes),
    };
    byDigest.set(key.digest, known);
    byId.set(key.id, known);
  }
  return { byDigest, byId };
}

/** The API_KEYS keys, by digest and their ids: no expiry, every scope, any document. */
function indexConfigured(keys: readonly string[]) {
  const byDigest = new Map(
    keys.map((key): [string, KnownKey] => [
      sha256Hex(key),
      { keyId: configuredKeyId(key), expiresAt: null, issued: false, arbitraryDocuments: true, scopes: EVERY_SCOPE },
    ]),
  );
  return { byDigest, ids: new Set([...byDigest.values()].map((known) => known.keyId)) };
}

/** Everything of the issued keys that changes what they allow: equal fingerprints, nothing to replace. */
function fingerprintOf(keys: readonly ActiveKey[]): string {
  const facts = (key: ActiveKey) =>
    `${key.id}:${key.digest}:${key.expiresAt?.getTime() ?? ''}:${key.allowArbitraryDocuments}:${key.scopes.join(' ')}`;
  return keys.map(facts).sort().join(',');
}

/**
 * The keys this instance accepts, API_KEYS and issued, by the SHA-256 of the token (so lookup timing
 * reveals nothing usable). Matched headers are remembered until the issued keys change.
 */
export function createKeyRing(configuredKeys: readonly string[], now: () => number = Date.now) {
  const configured = indexConfigured(configuredKeys);
  let issued = indexIssued([]);
  let issuedFingerprint = '';
  const remembered = new Map<string, KnownKey>();
  // Each issued key's expiry reported already: its streams end once; a new expiry is reported again.
  const reportedExpiries = new Map<string, number>();
  let lastUses = new Map<string, number>();

  const expired = (known: KnownKey) => known.expiresAt !== null && known.expiresAt <= now();

  function accept(known: KnownKey): Authentication {
    if (expired(known)) return { ok: false, keyWasSent: true };
    if (known.issued) lastUses.set(known.keyId, now());
    return { ok: true, keyId: known.keyId, arbitraryDocuments: known.arbitraryDocuments, scopes: known.scopes };
  }

  function verify(authorization: string | null): Authentication {
    if (!authorization) return { ok: false, keyWasSent: false };
    const seen = remembered.get(authorization);
    if (seen) return accept(seen);
    const token = BEARER.exec(authorization)?.[1];
    if (!token) return { ok: false, keyWasSent: true };
    const digest = sha256Hex(token);
    const known = configured.byDigest.get(digest) ?? issued.byDigest.get(digest);
    if (!known) return { ok: false, keyWasSent: true };
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(authorization, known);
    return accept(known);
  }

  /** Replaces the issued keys (from the apiKeys collection); the configured ones stay. Returns the ids gone. */
  function setIssuedKeys(keys: readonly ActiveKey[]): string[] {
    const fingerprint = fingerprintOf(keys);
    if (fingerprint === issuedFingerprint) return [];
    issuedFingerprint = fingerprint;
    const before = issued.byId;
    issued = indexIssued(keys);
    remembered.clear();
    for (const keyId of reportedExpiries.keys()) if (!issued.byId.has(keyId)) reportedExpiries.delete(keyId);
    return [...before.keys()].filter((keyId) => !issued.byId.has(keyId));
  }

  function takeLastUses(): Map<string, Date> {
    const taken = new Map([...lastUses].map(([keyId, at]) => [keyId, new Date(at)]));
    lastUses = new Map();
    return taken;
  }

  const hasUsableKey = () => configured.byDigest.size > 0 || [...issued.byId.values()].some((known) => !expired(known));

  /** The issued keys that reached their expiry since the last call, each expiry once: their open streams end. */
  function takeExpired(): string[] {
    const newly: string[] = [];
    for (const known of issued.byId.values()) {
      // A key not expired (now) forgets its report: an expiry set back to a reported one counts again.
      if (!expired(known)) reportedExpiries.delete(known.keyId);
      else if (reportedExpiries.get(known.keyId) !== known.expiresAt) {
        reportedExpiries.set(known.keyId, known.expiresAt ?? 0);
        newly.push(known.keyId);
      }
    }
    return newly;
  }

  /** Whether the key still authenticates, else why: a stream opened a while after its key check asks again. */
  const standing = (keyId: string): KeyGone | undefined => {
    const known = issued.byId.get(keyId);
    if (known) return expired(known) ? 'expired' : undefined;
    return configured.ids.has(keyId) ? undefined : 'revoked';
  };

  /** Whether the key authenticates now and has `scope`: for work done on its behalf with no request (webhooks). */
  const permits = (keyId: string, scope: Scope): boolean =>
    standing(keyId) === undefined && (issued.byId.get(keyId)?.scopes ?? EVERY_SCOPE).has(scope);

  return { verify, setIssuedKeys, takeLastUses, hasUsableKey, takeExpired, standing, permits };
}

export type KeyRing = ReturnType<typeof createKeyRing>;

/** How soon a created or revoked key reaches every instance, and an expired key's streams end. */
export const ISSUED_KEYS_REFRESH_MS = 2_000;
/** Last uses are written at most this often per key: a write per request would double the load. */
export const LAST_USED_FLUSH_MS = 60_000;

/** What the sync reads keys from and writes last uses to: the apiKeys collection, or memory in the benchmark. */
export type IssuedKeySource = Pick<ApiKeyStore, 'active' | 'recordUse'>;

/** Reads `apiKeys` into the ring every ISSUED_KEYS_REFRESH_MS; writes last uses every LAST_USED_FLUSH_MS. */
export function syncIssuedKeys(options: {
  ring: KeyRing;
  store: IssuedKeySource;
  logger: Logger;
  onDatabaseError?: (operation: string) => void;
  /** Issued keys revoked (or gone from the collection), or expired since the last sync: their open streams end. */
  onKeysGone?: (keyIds: string[], why: KeyGone) => void;
  refreshMs?: number;
  flushMs?: number;
}) {
  const { ring, store, logger } = options;
  const endExpired = () => {
    const expired = ring.takeExpired();
    if (expired.length > 0) options.onKeysGone?.(expired, 'expired');
  };
  const reads = startRefreshLoop({
    refresh: async () => {
      // Requests check expiry themselves; streams opened before it end here, before the read (which
      // may wait for its deadline) and again after it, with the expiries it brought.
      try {
        endExpired();
        const gone = ring.setIssuedKeys(await store.active());
        if (gone.length > 0) options.onKeysGone?.(gone, 'revoked');
      } finally {
        endExpired();
      }
    },
    intervalMs: options.refreshMs ?? ISSUED_KEYS_REFRESH_MS,
    logger,
    what: 'the issued API keys',
    onFailure: () => options.onDatabaseError?.('apiKeys.active'),
  });

  async function flushLastUses(): Promise<void> {
    const lastUses = ring.takeLastUses();
    if (lastUses.size === 0) return;
    try {
      await store.recordUse(lastUses);
    } catch (error) {
      options.onDatabaseError?.('apiKeys.recordUse');
      logger.warn({ err: error, keys: lastUses.size }, 'could not record when API keys were last used');
    }
  }

  const flushTimer = setInterval(() => void flushLastUses(), options.flushMs ?? LAST_USED_FLUSH_MS);
  flushTimer.unref();

  return {
    firstRead: reads.firstRead,
    /** Stops both timers and writes the last uses still pending. */
    async stop(): Promise<void> {
      clearInterval(flushTimer);
      await reads.stop();
      await flushLastUses();
    },
  };
}
