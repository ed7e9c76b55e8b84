import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { DATABASE_DEADLINE_MS, withDeadline, withSignal } from '../db/deadline.ts';
import { DEFAULT_SCOPES, SCOPES, type Scope, scopesOf } from './scopes.ts';

/** Issued keys start with this, so a leaked one is recognisable (secret scanners, logs, chat). */
export const ISSUED_KEY_PREFIX = 'psk_';
/** 32 random bytes: a key this strong needs no slow hash, so SHA-256 digests are stored. */
const KEY_BYTES = 32;
export const KEY_NAME_MAX_LENGTH = 100;
/** Ten years: a longer expiry is a key that never expires, which is what omitting it says. */
export const MAX_EXPIRY_DAYS = 3_650;
const DAY_MS = 86_400_000;

/** One issued key as operators see it: never the key itself, which exists only in the create answer. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** May send GraphQL documents of its own while TRUSTED_DOCUMENTS=enforce (GraphiQL users, internal tools). */
  allowArbitraryDocuments: boolean;
  /** What it may do, in SCOPES' order (every scope for a key issued before scopes existed). */
  scopes: Scope[];
}

/** What the service needs to recognise a key: its digest, its id, its expiry and what it may do and send. */
export interface ActiveKey {
  id: string;
  digest: string;
  expiresAt: Date | null;
  allowArbitraryDocuments: boolean;
  scopes: Scope[];
}

interface ApiKeyDocument {
  _id: string;
  name: string;
  /** SHA-256 of the key, hex. */
  digest: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** Absent on keys issued before trusted documents: those may not send documents of their own. */
  allowArbitraryDocuments?: boolean;
  /** Absent on keys issued before scopes: those keep every scope (they could do everything then). */
  scopes?: Scope[];
}

export type RevokeOutcome =
  | { outcome: 'revoked'; key: ApiKeyRecord }
  | { outcome: 'already-revoked'; key: ApiKeyRecord }
  | { outcome: 'not-found' };

export const API_KEYS_COLLECTION = 'apiKeys';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function toRecord(doc: ApiKeyDocument): ApiKeyRecord {
  const { _id, name, createdAt, expiresAt, revokedAt, lastUsedAt, allowArbitraryDocuments, scopes } = doc;
  return {
    id: _id,
    name,
    createdAt,
    expiresAt: expiresAt ?? null,
    revokedAt: revokedAt ?? null,
    lastUsedAt: lastUsedAt ?? null,
    allowArbitraryDocuments: allowArbitraryDocuments === true,
    scopes: scopesOf(scopes),
  };
}

/**
 * Every call fails with DatabaseUnavailableError past the one database deadline. Driver errors stay
 * as they are: the `keys` command reports a MongoError as "the database refused".
 */
const bounded = <T>(work: (signal: AbortSignal) => Promise<T>) => withDeadline(DATABASE_DEADLINE_MS, work);

/** A key's name: what an operator recognises it by in `keys list` and in metrics of its id. */
export function keyNameProblem(name: string): string | undefined {
  if (name.trim().length === 0) return 'a key needs a name';
  if (name.length > KEY_NAME_MAX_LENGTH) return `a key name has at most ${KEY_NAME_MAX_LENGTH} characters`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'a key name cannot hold control characters';
  return undefined;
}

/** Bounded like every other call here, so neither the service's start nor `keys create` can hang on it. */
export async function ensureApiKeyIndexes(db: Db): Promise<void> {
  const keys = db.collection<ApiKeyDocument>(API_KEYS_COLLECTION);
  await bounded((signal) =>
    keys.createIndex({ digest: 1 }, withSignal({ name: 'digest_unique', unique: true }, signal)),
  );
}

/** What `keys create` asks for. */
export interface NewKeyInput {
  name: string;
  expiresInDays?: number;
  /** Default false: an issued key runs only published documents while TRUSTED_DOCUMENTS=enforce. */
  allowArbitraryDocuments?: boolean;
  /** Default DEFAULT_SCOPES (`pets:read pets:write`); at least one. */
  scopes?: readonly Scope[];
  now?: Date;
}

/** A new key and the document that records it; RangeError for a bad name or expiry. */
function newKey(input: NewKeyInput): { key: string; doc: ApiKeyDocument } {
  const problem = keyNameProblem(input.name);
  if (problem) throw new RangeError(problem);
  const days = input.expiresInDays;
  if (days !== undefined && !(Number.isInteger(days) && days >= 1 && days <= MAX_EXPIRY_DAYS)) {
    throw new RangeError(`expiry must be a whole number of days from 1 to ${MAX_EXPIRY_DAYS}`);
  }
  const scopes = SCOPES.filter((scope) => (input.scopes ?? DEFAULT_SCOPES).includes(scope));
  if (scopes.length === 0) throw new RangeError('a key needs at least one scope');
  const createdAt = input.now ?? new Date();
  const key = `${ISSUED_KEY_PREFIX}${randomBytes(KEY_BYTES).toString('base64url')}`;
  const doc: ApiKeyDocument = {
    _id: `key_${randomBytes(8).toString('hex')}`,
    name: input.name,
    digest: sha256Hex(key),
    createdAt,
    expiresAt: days === undefined ? null : new Date(createdAt.getTime() + days * DAY_MS),
    revokedAt: null,
    lastUsedAt: null,
    allowArbitraryDocuments: input.allowArbitraryDocuments === true,
    scopes,
  };
  return { key, doc };
}

/**
 * The `apiKeys` collection: issued keys as SHA-256 digests with their lifecycle dates. Shared by the
 * service (which reads the active ones) and the `keys` command (which issues, lists and revokes).
 */
export function createApiKeyStore(db: Db) {
  const keys: Collection<ApiKeyDocument> = db.collection<ApiKeyDocument>(API_KEYS_COLLECTION);

  /** Stores a new key's digest and returns the key: the only time it exists outside its holder. */
  async function issue(input: NewKeyInput) {
    const { key, doc } = newKey(input);
    await bounded((signal) => keys.insertOne(doc, withSignal({}, signal)));
    return { key, record: toRecord(doc) };
  }

  /** Every issued key, oldest first, revoked and expired ones included. */
  async function list(): Promise<ApiKeyRecord[]> {
    const docs = await bounded((signal) => keys.find({}, { signal }).toArray());
    return docs.map(toRecord).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }

  async function revoke(id: string, now: Date = new Date()): Promise<RevokeOutcome> {
    const found = await bounded((signal) => keys.findOne({ _id: id }, { signal }));
    if (!found) return { outcome: 'not-found' };
    if (found.revokedAt) return { outcome: 'already-revoked', key: toRecord(found) };
    await bounded((signal) =>
      keys.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: now } }, withSignal({}, signal)),
    );
    return { outcome: 'revoked', key: toRecord({ ...found, revokedAt: now }) };
  }

  /** Keys not revoked, expired ones included: expiry is checked on every request, to the millisecond. */
  async function active(): Promise<ActiveKey[]> {
    const projection = { _id: 1, digest: 1, expiresAt: 1, allowArbitraryDocuments: 1, scopes: 1 };
    const docs = await bounded((signal) => keys.find({ revokedAt: null }, { projection, signal }).toArray());
    return docs.map(({ _id, digest, expiresAt, allowArbitraryDocuments, scopes }) => ({
      id: _id,
      digest,
      expiresAt: expiresAt ?? null,
      allowArbitraryDocuments: allowArbitraryDocuments === true,
      scopes: scopesOf(scopes),
    }));
  }

  /** Moves each key's last use forward (never back: another instance may have written a later one). */
  async function recordUse(lastUses: ReadonlyMap<string, Date>): Promise<void> {
    await bounded((signal) =>
      Promise.all(
        [...lastUses].map(([id, at]) =>
          keys.updateOne({ _id: id }, { $max: { lastUsedAt: at } }, withSignal({}, signal)),
        ),
      ),
    );
  }

  return { issue, list, revoke, active, recordUse };
}

export type ApiKeyStore = ReturnType<typeof createApiKeyStore>;
