// `npm run webhooks -- add|list|deliveries|redeliver|rotate-secret|disable|enable|remove`: the
// Standard Webhooks endpoints the service delivers pet.created to. stdout carries only the answer.

import { type ApiKeyRecord, createApiKeyStore, ISSUED_KEY_PREFIX } from '../auth/api-key-store.ts';
import { DATABASE_DEADLINE_MS, withDeadline } from '../db/deadline.ts';
import { decodeCursor } from '../pets/cursor.ts';
import { PET_STATUSES, type PetStatus } from '../pets/pet.ts';
import { PETS_COLLECTION, type PetDocument } from '../pets/pet-document.ts';
import { highestId } from '../pets/pet-ids.ts';
import {
  createWebhookStore,
  DELIVERIES_KEPT_PER_ENDPOINT,
  ENDPOINT_ID,
  ensureWebhookIndexes,
  SECRET_PREFIX,
  type WebhookEndpoint,
} from '../webhooks/webhook-store.ts';
import { resolveTarget, TargetRefusedError, targetProblem } from '../webhooks/webhook-target.ts';
import type { CommandContext, HelpCommand } from './command-line.ts';
import { CommandFailure, onlyOne, parseCommandLine, runCommandLine, UsageError } from './command-line.ts';
import * as answers from './webhook-answers.ts';

type WebhooksCommand = { json: boolean } & (
  | { command: 'add'; url: string; keyId: string; status: PetStatus | null }
  | { command: 'list' }
  | { command: 'deliveries'; id: string; limit: number }
  | { command: 'redeliver'; id: string; afterId: number }
  | { command: 'rotate-secret'; id: string; overlapMs: number }
  | { command: 'disable'; id: string }
  | { command: 'enable'; id: string }
  | { command: 'remove'; id: string }
);

const COMMANDS = ['add', 'list', 'deliveries', 'redeliver', 'rotate-secret', 'disable', 'enable', 'remove'];
/** Each option and the one command it applies to. */
const OPTION_OF = { key: 'add', status: 'add', limit: 'deliveries', since: 'redeliver', overlap: 'rotate-secret' };
const DELIVERIES_LIMIT = { min: 1, max: 1_000, default: 50 } as const;
const MAX_OVERLAP_DAYS = 7;
const DURATION_UNITS_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const RESOLVE_TIMEOUT_MS = 5_000;

const USAGE = `Usage: npm run webhooks -- <command> [options]

Registers and operates the Standard Webhooks endpoints the service delivers pet.created to
(collections webhookEndpoints and webhookDeliveries of MONGODB_DB). Each message is signed with the
endpoint's secret; running services read the endpoints every 2 s, so every change acts within 2 s.

Commands:
  add URL --key KEY_ID [--status STATUS]
                          register an endpoint that receives every pet created from now on, on
                          behalf of an issued key (key_..., see npm run keys -- list) that is active
                          and has pets:read; deliveries stop while the key is revoked, expired or
                          lacks it. Prints the endpoint's signing secret, once
  list                    every endpoint: id, URL, key, status filter, state and why, where delivery
                          resumes (AFTER, a pet's cursor), how many secrets sign, created; never a
                          secret
  deliveries ID [--limit N]
                          the endpoint's attempts, newest first: time, webhook-id, pet, attempt,
                          HTTP status, latency, outcome, error (the last ${DELIVERIES_KEPT_PER_ENDPOINT} are kept)
  redeliver ID --since CURSOR
                          deliver again every pet after CURSOR's (a cursor from GET /v1/pets, a
                          message's cursor field, or list's AFTER); the endpoint becomes active
                          whatever its state
  rotate-secret ID --overlap DURATION
                          a new signing secret, printed once; the old one still signs beside it for
                          DURATION, so the receiver can switch without losing a message
  disable ID              stop delivering; pets created meanwhile are delivered once it is enabled
  enable ID               deliver again from where it stopped (also after retries ran out or a 410)
  remove ID               delete the endpoint and its delivery log

Options:
  --key KEY_ID        add: the issued key the endpoint belongs to (its id, never the key itself)
  --status STATUS     add: only pets of this status (${PET_STATUSES.join(', ')}); default every pet
  --limit N           deliveries: how many attempts, ${DELIVERIES_LIMIT.min} to ${DELIVERIES_LIMIT.max}; default ${DELIVERIES_LIMIT.default}
  --since CURSOR      redeliver: delivery starts again after this pet
  --overlap DURATION  rotate-secret: 0s, 90s, 10m, 2h, 1d... at most ${MAX_OVERLAP_DAYS}d; 0s drops the old secret now
  --json              print one JSON document on stdout and nothing else there
                      (run npm run --silent webhooks -- ..., or npm prints its banner on stdout too)
  -h, --help          this help

URLs are http: or https: and must resolve to public addresses: loopback, private and link-local
targets are refused unless WEBHOOK_ALLOW_PRIVATE_TARGETS=true (tests, intranets). Signing secrets
(whsec_...) are stored in the database as they are, because signing needs them: whoever reads
webhookEndpoints can sign messages. Only add and rotate-secret show a secret, once.

Environment: MONGODB_URI, MONGODB_DB, DATA_DIR, WEBHOOK_ALLOW_PRIVATE_TARGETS, as for the service.
Without MONGODB_URI the command uses the embedded database of the service running on DATA_DIR, or
starts it for its own duration.
Exit status: 0 done; 1 failed (database unreachable, unknown id, key or URL refused); 2 wrong usage
or configuration.`;

/** A pasted secret or key is never echoed (terminal scrollback, CI logs); anything else is, bounded. */
const looksSecret = (text: string) => text.startsWith(SECRET_PREFIX) || text.startsWith(ISSUED_KEY_PREFIX);
const shown = (text: string) => (looksSecret(text) ? '(a secret or key, not repeated here)' : `"${text.slice(0, 60)}"`);

function parseOverlap(text: string): number {
  const match = /^(\d{1,7})([smhd])$/.exec(text);
  const ms = match ? Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS] : Number.NaN;
  if (!(ms <= MAX_OVERLAP_DAYS * DURATION_UNITS_MS.d)) {
    throw new UsageError(
      `--overlap takes a duration such as 0s, 90s, 10m, 2h or 1d, at most ${MAX_OVERLAP_DAYS}d, not ${shown(text)}`,
    );
  }
  return ms;
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DELIVERIES_LIMIT.default;
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= DELIVERIES_LIMIT.min && limit <= DELIVERIES_LIMIT.max)) {
    throw new UsageError(`--limit takes a whole number from 1 to ${DELIVERIES_LIMIT.max}, not ${shown(text)}`);
  }
  return limit;
}

function parseStatus(text: string | undefined): PetStatus | null {
  if (text === undefined) return null;
  const status = PET_STATUSES.find((known) => known === text);
  if (!status) throw new UsageError(`--status takes ${PET_STATUSES.join(', ')}, not ${shown(text)}`);
  return status;
}

/** The endpoint a command acts on: a pasted secret or key is refused here, without repeating it. */
function endpointId(command: string, rest: string[]): string {
  const id = onlyOne(command, 'the ID of an endpoint', rest);
  if (looksSecret(id)) throw new UsageError(`${command} takes the id of an endpoint (whe_..., see list), not a secret`);
  return id;
}

function parseAdd(rest: string[], values: { key?: string; status?: string }) {
  const url = onlyOne('add', 'a URL', rest);
  if (looksSecret(url)) throw new UsageError('add takes the URL of the receiver, not a secret or key');
  // Everything but the private-address rule, which needs the settings: those are read after the command line.
  const problem = targetProblem(url, { allowPrivate: true });
  if (problem) throw new UsageError(`the URL is refused: ${problem}`);
  const keyId = values.key;
  if (keyId === undefined) throw new UsageError('add needs --key KEY_ID, the issued key the endpoint belongs to');
  if (keyId.startsWith(ISSUED_KEY_PREFIX)) {
    throw new UsageError('--key takes the id of a key (key_..., see npm run keys -- list), not the key itself');
  }
  return { url: new URL(url).href, keyId, status: parseStatus(values.status) };
}

function parseSince(text: string | undefined): number {
  if (text === undefined) throw new UsageError('redeliver needs --since CURSOR: delivery starts again after its pet');
  const afterId = decodeCursor(text);
  if (afterId === null)
    throw new UsageError(`--since takes a pet's cursor (as GET /v1/pets gives), not ${shown(text)}`);
  return afterId;
}

function parseWebhooksArgs(argv: string[]): WebhooksCommand | HelpCommand {
  const { values, positionals } = parseCommandLine(argv, {
    key: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
    since: { type: 'string' },
    overlap: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') return { command: 'help' };
  if (!COMMANDS.includes(command)) {
    throw new UsageError(`unknown command ${shown(command)}: use ${COMMANDS.join(', ')}`);
  }
  for (const [option, only] of Object.entries(OPTION_OF)) {
    const given = values[option as keyof typeof OPTION_OF] !== undefined;
    if (given && command !== only) throw new UsageError(`--${option} applies to ${only} only`);
  }
  const { json } = values;
  switch (command) {
    case 'add':
      return { command, json, ...parseAdd(rest, values) };
    case 'list':
      if (rest.length > 0) throw new UsageError('list takes no arguments');
      return { command, json };
    case 'deliveries':
      return { command, json, id: endpointId(command, rest), limit: parseLimit(values.limit) };
    case 'redeliver':
      return { command, json, id: endpointId(command, rest), afterId: parseSince(values.since) };
    case 'rotate-secret': {
      const id = endpointId(command, rest);
      if (values.overlap === undefined) {
        throw new UsageError(
          'rotate-secret needs --overlap DURATION: how long the old secret still signs (0s: not at all)',
        );
      }
      return { command, json, id, overlapMs: parseOverlap(values.overlap) };
    }
    default:
      return { command: command as 'disable' | 'enable' | 'remove', json, id: endpointId(command, rest) };
  }
}

const PRIVATE_HINT =
  ' (loopback, private and link-local targets are allowed only with WEBHOOK_ALLOW_PRIVATE_TARGETS=true)';

/** Refuses a URL the service would not deliver to, before the database is opened. */
async function checkTarget(url: string, allowPrivate: boolean): Promise<void> {
  const hint = allowPrivate ? '' : PRIVATE_HINT;
  const problem = targetProblem(url, { allowPrivate });
  if (problem) throw new CommandFailure(`the URL is refused: ${problem}${hint}`);
  try {
    await resolveTarget(new URL(url), { allowPrivate, signal: AbortSignal.timeout(RESOLVE_TIMEOUT_MS) });
  } catch (error) {
    if (error instanceof TargetRefusedError) throw new CommandFailure(`the URL is refused: ${error.message}${hint}`);
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new CommandFailure(`the URL's host did not resolve within ${RESOLVE_TIMEOUT_MS / 1000} s`);
    }
    throw error;
  }
}

/** The issued key an endpoint delivers on behalf of: it must be able to read pets now. */
function usableKey(keys: ApiKeyRecord[], keyId: string, now: Date): ApiKeyRecord {
  const key = keys.find((record) => record.id === keyId);
  const which = /^key_[0-9a-f]{16}$/.test(keyId) ? keyId : 'that id';
  if (!key) throw new CommandFailure(`no issued key has ${which} (see npm run keys -- list)`);
  const named = `key ${key.id} (${key.name})`;
  if (key.revokedAt) throw new CommandFailure(`${named} is revoked: an endpoint needs an active key`);
  if (key.expiresAt && key.expiresAt <= now)
    throw new CommandFailure(`${named} has expired: an endpoint needs an active key`);
  if (!key.scopes.includes('pets:read')) {
    throw new CommandFailure(`${named} lacks the scope pets:read, which receiving pets needs`);
  }
  return key;
}

async function add(command: Extract<WebhooksCommand, { command: 'add' }>, { database, config }: CommandContext) {
  await checkTarget(command.url, config.WEBHOOK_ALLOW_PRIVATE_TARGETS);
  const db = await database();
  const key = usableKey(await createApiKeyStore(db).list(), command.keyId, new Date());
  await ensureWebhookIndexes(db);
  // From the newest pet on: an endpoint gets the pets created after it was added, not the store's history.
  const pets = db.collection<PetDocument>(PETS_COLLECTION);
  const position = await withDeadline(DATABASE_DEADLINE_MS, (signal) => highestId(pets, signal));
  const { url, keyId, status } = command;
  const endpoint = await createWebhookStore(db).add({ url, keyId, status, position });
  const [first] = endpoint.secrets;
  if (!first) throw new Error('the store added an endpoint without a secret');
  return answers.addedAnswer(endpoint, first.secret, key, command.json);
}

const unknownEndpoint = (id: string) =>
  new CommandFailure(`no webhook endpoint has ${ENDPOINT_ID.test(id) ? `the id ${id}` : 'that id'} (see list)`);

async function runWebhooksCommand(command: WebhooksCommand, context: CommandContext): Promise<string> {
  if (command.command === 'add') return add(command, context);
  const store = createWebhookStore(await context.database());
  if (command.command === 'list') return answers.listAnswer(await store.list(), new Date(), command.json);
  const before = await store.get(command.id);
  if (!before) throw unknownEndpoint(command.id);
  const { json } = command;
  const changed = (change: answers.StateChange, after: WebhookEndpoint | null) => {
    if (!after) throw unknownEndpoint(command.id);
    return answers.changedAnswer(change, { before, after }, json);
  };
  switch (command.command) {
    case 'deliveries':
      return answers.deliveriesAnswer(before, await store.deliveries(before.id, command.limit), json);
    case 'rotate-secret': {
      const now = new Date();
      const rotated = await store.rotateSecret(before.id, command.overlapMs, now);
      if (!rotated) throw unknownEndpoint(command.id);
      return answers.rotatedAnswer(rotated.endpoint, rotated.secret, now, json);
    }
    case 'remove':
      if (!(await store.remove(before.id))) throw unknownEndpoint(command.id);
      return answers.removedAnswer(before, json);
    case 'redeliver':
      return changed('redelivered', await store.rewind(before.id, command.afterId));
    case 'disable':
      return changed('disabled', await store.disable(before.id));
    case 'enable':
      return changed('enabled', await store.enable(before.id));
  }
}

await runCommandLine({ name: 'webhooks', usage: USAGE, parse: parseWebhooksArgs, run: runWebhooksCommand });
