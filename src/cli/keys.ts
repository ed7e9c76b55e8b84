// `npm run keys -- create|list|revoke`: issues and revokes the API keys the service accepts.
// stdout carries only the answer (one JSON document with --json); everything else goes to stderr.

import {
  type ApiKeyRecord,
  createApiKeyStore,
  ensureApiKeyIndexes,
  ISSUED_KEY_PREFIX,
  keyNameProblem,
  MAX_EXPIRY_DAYS,
  type RevokeOutcome,
} from '../auth/api-key-store.ts';
import { DEFAULT_SCOPES, isScope, SCOPES, type Scope } from '../auth/scopes.ts';
import type { CommandContext, HelpCommand } from './command-line.ts';
import { CommandFailure, onlyOne, parseCommandLine, runCommandLine, UsageError } from './command-line.ts';
import { jsonAnswer, shortDate, table } from './text-format.ts';

type KeysCommand =
  | {
      command: 'create';
      name: string;
      expiresInDays: number | undefined;
      allowArbitraryDocuments: boolean;
      scopes: Scope[];
      json: boolean;
    }
  | { command: 'list'; json: boolean }
  | { command: 'revoke'; id: string; json: boolean };

const USAGE = `Usage: npm run keys -- <command> [options]

Issues, lists and revokes the API keys the service accepts (collection apiKeys of MONGODB_DB).

Commands:
  create NAME [--scope SCOPE]... [--expires DAYS] [--allow-arbitrary-documents]
                                issue a key; it is printed once, only its SHA-256 digest is stored
  list                          every issued key with its scopes and status: active, expired or revoked
  revoke ID                     revoke a key by its id (key_..., see list)

Options:
  --scope SCOPE   create only, repeatable: what the key may do; default ${DEFAULT_SCOPES.join(' ')}
                    pets:read     list and get pets, GraphQL queries
                    pets:write    create pets (GraphQL mutations)
                    metrics:read  GET /metrics on the service's port (operators' data: never by default)
                  Without the scope an operation needs, a key gets 403 FORBIDDEN. Keys issued before
                  scopes existed keep every scope, as they could do all of this then (list shows it);
                  revoke such a key and issue another to narrow it. API_KEYS keys have every scope.
  --expires DAYS  create only: the key expires after DAYS days (1 to ${MAX_EXPIRY_DAYS}); default never
  --allow-arbitrary-documents
                  create only: the key may send GraphQL documents of its own. While the service runs
                  with TRUSTED_DOCUMENTS=enforce, other issued keys may run only the documents
                  published with npm run documents; this is for GraphiQL users and internal tools
  --json          print one JSON document on stdout and nothing else there
                  (run npm run --silent keys -- ..., or npm prints its banner on stdout too)
  -h, --help      this help

Environment: MONGODB_URI, MONGODB_DB, DATA_DIR, as for the service. Without MONGODB_URI the command
uses the embedded database of the service running on DATA_DIR, or starts it for its own duration.
Exit status: 0 done, 1 failed (database unreachable, unknown id), 2 wrong usage or configuration.`;

function parseDays(text: string): number {
  const days = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(days >= 1 && days <= MAX_EXPIRY_DAYS)) {
    throw new UsageError(`--expires takes a whole number of days from 1 to ${MAX_EXPIRY_DAYS}, not "${text}"`);
  }
  return days;
}

/** The scopes asked for, in SCOPES' order, each once; the defaults when none is. */
function parseScopes(asked: string[] | undefined): Scope[] {
  if (asked === undefined) return [...DEFAULT_SCOPES];
  for (const scope of asked) {
    if (!isScope(scope)) {
      // Bounded: a pasted key or a long value is not echoed whole.
      const shown = scope.startsWith(ISSUED_KEY_PREFIX) ? '(a key, not repeated here)' : `"${scope.slice(0, 40)}"`;
      throw new UsageError(`unknown scope ${shown}: use ${SCOPES.join(', ')}`);
    }
  }
  return SCOPES.filter((scope) => asked.includes(scope));
}

function parseKeysArgs(argv: string[]): KeysCommand | HelpCommand {
  const { values, positionals } = parseCommandLine(argv, {
    expires: { type: 'string' },
    'allow-arbitrary-documents': { type: 'boolean', default: false },
    scope: { type: 'string', multiple: true },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') return { command: 'help' };
  if (command !== 'create') {
    if (values.expires !== undefined) throw new UsageError('--expires applies to create only');
    if (values['allow-arbitrary-documents']) throw new UsageError('--allow-arbitrary-documents applies to create only');
    if (values.scope !== undefined) throw new UsageError('--scope applies to create only');
  }
  switch (command) {
    case 'create': {
      const name = onlyOne('create', 'a NAME', rest, ' (quote a name that has spaces)');
      const problem = keyNameProblem(name);
      if (problem) throw new UsageError(problem);
      const expiresInDays = values.expires === undefined ? undefined : parseDays(values.expires);
      const allowArbitraryDocuments = values['allow-arbitrary-documents'];
      const scopes = parseScopes(values.scope);
      return { command, name, expiresInDays, allowArbitraryDocuments, scopes, json: values.json };
    }
    case 'list':
      if (rest.length > 0) throw new UsageError('list takes no arguments');
      return { command, json: values.json };
    case 'revoke': {
      const id = onlyOne('revoke', 'the ID of a key', rest);
      // Not echoed: it is a secret, and repeating it would put it in terminal scrollback and CI logs.
      if (id.startsWith(ISSUED_KEY_PREFIX)) {
        throw new UsageError('revoke takes the id of a key (key_..., see list), not the key itself');
      }
      return { command, id, json: values.json };
    }
    default: {
      const shown = command.startsWith(ISSUED_KEY_PREFIX) ? '(a key, not repeated here)' : `"${command}"`;
      throw new UsageError(`unknown command ${shown}: use create, list or revoke`);
    }
  }
}

interface IssuedKey {
  key: string;
  record: ApiKeyRecord;
}

type Revoked = Exclude<RevokeOutcome, { outcome: 'not-found' }>;

/** Revoked wins over expired: it is the operator's decision, expiry only the calendar's. */
function keyStatus(record: Pick<ApiKeyRecord, 'revokedAt' | 'expiresAt'>, now: Date): 'active' | 'expired' | 'revoked' {
  if (record.revokedAt) return 'revoked';
  if (record.expiresAt && record.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

// Dates answer in ISO 8601, as JSON.stringify writes them.
function createdJson({ key, record: { id, name, createdAt, expiresAt, allowArbitraryDocuments, scopes } }: IssuedKey) {
  return jsonAnswer({ id, name, key, createdAt, expiresAt, allowArbitraryDocuments, scopes });
}

function createdText({ key, record }: IssuedKey): string {
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

function listJson(records: ApiKeyRecord[], now: Date): string {
  const answer = ({ allowArbitraryDocuments, scopes, ...named }: ApiKeyRecord) => ({
    ...named,
    status: keyStatus(named, now),
    allowArbitraryDocuments,
    scopes,
  });
  return jsonAnswer(records.map(answer));
}

function listText(records: ApiKeyRecord[], now: Date): string {
  if (records.length === 0) return 'No issued keys.\n';
  return table([
    ['ID', 'NAME', 'STATUS', 'SCOPES', 'DOCUMENTS', 'CREATED', 'EXPIRES', 'LAST USED'],
    ...records.map((record) => [
      record.id,
      record.name,
      keyStatus(record, now),
      record.scopes.join(','),
      // Any document, or only published ones under TRUSTED_DOCUMENTS=enforce.
      record.allowArbitraryDocuments ? 'any' : 'published',
      shortDate(record.createdAt),
      record.expiresAt ? shortDate(record.expiresAt) : '-',
      record.lastUsedAt ? shortDate(record.lastUsedAt) : 'never',
    ]),
  ]);
}

function revokedJson({ outcome, key: { id, name, revokedAt } }: Revoked): string {
  return jsonAnswer({ id, name, revokedAt, alreadyRevoked: outcome === 'already-revoked' });
}

function revokedText({ outcome, key }: Revoked): string {
  if (outcome === 'already-revoked') {
    const when = key.revokedAt ? ` on ${shortDate(key.revokedAt)}` : '';
    return `${key.id} (${key.name}) was already revoked${when}; nothing changed.\n`;
  }
  return `Revoked ${key.id} (${key.name}). Running services stop accepting it within 5 s (while they can read the database).\n`;
}

/** Ids as the store makes them; anything else is not echoed back (it may be a pasted secret). */
const KEY_ID = /^key_[0-9a-f]{16}$/;

async function runKeysCommand(command: KeysCommand, { database }: CommandContext): Promise<string> {
  const db = await database();
  const store = createApiKeyStore(db);
  switch (command.command) {
    case 'create': {
      await ensureApiKeyIndexes(db);
      const { name, expiresInDays, allowArbitraryDocuments, scopes } = command;
      const issued = await store.issue({ name, expiresInDays, allowArbitraryDocuments, scopes });
      return command.json ? createdJson(issued) : createdText(issued);
    }
    case 'list': {
      const records = await store.list();
      return command.json ? listJson(records, new Date()) : listText(records, new Date());
    }
    case 'revoke': {
      const outcome = await store.revoke(command.id);
      if (outcome.outcome === 'not-found') {
        const which = KEY_ID.test(command.id) ? `the id ${command.id}` : 'that id';
        throw new CommandFailure(`no key has ${which} (see npm run keys -- list)`);
      }
      return command.json ? revokedJson(outcome) : revokedText(outcome);
    }
  }
}

await runCommandLine({ name: 'keys', usage: USAGE, parse: parseKeysArgs, run: runKeysCommand });
