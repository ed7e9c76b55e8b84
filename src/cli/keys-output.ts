import type { ApiKeyRecord, RevokeOutcome } from '../auth/api-key-store.ts';
import { iso, jsonAnswer, shortDate, table } from './text-format.ts';

export type KeyStatus = 'active' | 'expired' | 'revoked';

export interface IssuedKey {
  key: string;
  record: ApiKeyRecord;
}

type Revoked = Exclude<RevokeOutcome, { outcome: 'not-found' }>;

/** Revoked wins over expired: it is the operator's decision, expiry only the calendar's. */
export function keyStatus(record: ApiKeyRecord, now: Date): KeyStatus {
  if (record.revokedAt) return 'revoked';
  if (record.expiresAt && record.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

/** What `list` says in its DOCUMENTS column: any document, or only published ones under TRUSTED_DOCUMENTS=enforce. */
const documentsAllowed = (record: ApiKeyRecord) => (record.allowArbitraryDocuments ? 'any' : 'published');

export function createdJson({ key, record }: IssuedKey): string {
  return jsonAnswer({
    id: record.id,
    name: record.name,
    key,
    createdAt: iso(record.createdAt),
    expiresAt: iso(record.expiresAt),
    allowArbitraryDocuments: record.allowArbitraryDocuments,
    scopes: record.scopes,
  });
}

export function createdText({ key, record }: IssuedKey): string {
  const expiry = record.expiresAt ? `valid until ${shortDate(record.expiresAt)}` : 'with no expiry';
  return [
    `Created key ${record.id} (${record.name}), ${expiry}, with the scopes ${record.scopes.join(' ')}.`,
    record.allowArbitraryDocuments
      ? 'It may send GraphQL documents of its own, even while the service runs with TRUSTED_DOCUMENTS=enforce.'
      : 'While the service runs with TRUSTED_DOCUMENTS=enforce, it may run only published documents.',
    '',
    `  ${key}`,
    '',
    'This is the only time the key is shown: store it now (a secret manager, not a chat).',
    'Only its SHA-256 digest is kept, so it cannot be shown again; a lost key is revoked and replaced.',
    `Revoke it with: npm run keys -- revoke ${record.id}`,
    '',
  ].join('\n');
}

export function listJson(records: ApiKeyRecord[], now: Date): string {
  return jsonAnswer(
    records.map((record) => ({
      id: record.id,
      name: record.name,
      createdAt: iso(record.createdAt),
      expiresAt: iso(record.expiresAt),
      revokedAt: iso(record.revokedAt),
      lastUsedAt: iso(record.lastUsedAt),
      status: keyStatus(record, now),
      allowArbitraryDocuments: record.allowArbitraryDocuments,
      scopes: record.scopes,
    })),
  );
}

export function listText(records: ApiKeyRecord[], now: Date): string {
  if (records.length === 0) return 'No issued keys.\n';
  return table([
    ['ID', 'NAME', 'STATUS', 'SCOPES', 'DOCUMENTS', 'CREATED', 'EXPIRES', 'LAST USED'],
    ...records.map((record) => [
      record.id,
      record.name,
      keyStatus(record, now),
      record.scopes.join(','),
      documentsAllowed(record),
      shortDate(record.createdAt),
      record.expiresAt ? shortDate(record.expiresAt) : '-',
      record.lastUsedAt ? shortDate(record.lastUsedAt) : 'never',
    ]),
  ]);
}

export function revokedJson({ outcome, key }: Revoked): string {
  return jsonAnswer({
    id: key.id,
    name: key.name,
    revokedAt: iso(key.revokedAt),
    alreadyRevoked: outcome === 'already-revoked',
  });
}

export function revokedText({ outcome, key }: Revoked): string {
  if (outcome === 'already-revoked') {
    const when = key.revokedAt ? ` on ${shortDate(key.revokedAt)}` : '';
    return `${key.id} (${key.name}) was already revoked${when}; nothing changed.\n`;
  }
  return `Revoked ${key.id} (${key.name}). Running services stop accepting it within 5 s (while they can read the database).\n`;
}
