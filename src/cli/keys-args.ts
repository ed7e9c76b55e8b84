import { parseArgs } from 'node:util';
import { ISSUED_KEY_PREFIX, keyNameProblem, MAX_EXPIRY_DAYS } from '../auth/api-key-store.ts';

export type KeysCommand =
  | { command: 'help' }
  | { command: 'create'; name: string; expiresInDays: number | undefined; json: boolean }
  | { command: 'list'; json: boolean }
  | { command: 'revoke'; id: string; json: boolean };

/** The command line is wrong: exit 2, before anything touches the database. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const USAGE = `Usage: npm run keys -- <command> [options]

Issues, lists and revokes the API keys the service accepts (collection apiKeys of MONGODB_DB).

Commands:
  create NAME [--expires DAYS]  issue a key; it is printed once, only its SHA-256 digest is stored
  list                          every issued key with its status: active, expired or revoked
  revoke ID                     revoke a key by its id (key_..., see list)

Options:
  --expires DAYS  create only: the key expires after DAYS days (1 to ${MAX_EXPIRY_DAYS}); default never
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

function onlyOne(command: string, what: string, positionals: string[], hint = ''): string {
  const [value, ...extra] = positionals;
  if (value === undefined) throw new UsageError(`${command} needs ${what}`);
  if (extra.length > 0) throw new UsageError(`${command} takes only ${what}${hint}`);
  return value;
}

export function parseKeysArgs(argv: string[]): KeysCommand {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    if (String((error as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError((error as Error).message);
    }
    throw error;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') return { command: 'help' };
  if (values.expires !== undefined && command !== 'create') throw new UsageError('--expires applies to create only');
  switch (command) {
    case 'create': {
      const name = onlyOne('create', 'a NAME', rest, ' (quote a name that has spaces)');
      const problem = keyNameProblem(name);
      if (problem) throw new UsageError(problem);
      const expiresInDays = values.expires === undefined ? undefined : parseDays(values.expires);
      return { command, name, expiresInDays, json: values.json };
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

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      expires: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}
