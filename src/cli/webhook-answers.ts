// What `npm run webhooks` answers, in text and as --json. Secrets appear only in the two answers
// that create one (add, rotate-secret); every other answer says how many an endpoint has.

import type { ApiKeyRecord } from '../auth/api-key-store.ts';
import { encodeCursor } from '../pets/cursor.ts';
import type { DeliveryAttempt, WebhookEndpoint } from '../webhooks/webhook-store.ts';
import { jsonAnswer, secondDate, shortDate, table } from './text-format.ts';

/** How soon running services act on a change: they read the endpoints every 2 s. */
export const TAKES_EFFECT = 'Running services act on it within 2 s (while they can read the database).';

/** The secrets still signed with at `now`, and when the last old one stops being (null: no rotation under way). */
function signing(endpoint: WebhookEndpoint, now: Date) {
  const valid = endpoint.secrets.filter(({ expiresAt }) => expiresAt === null || expiresAt > now);
  const ends = valid.flatMap(({ expiresAt }) => (expiresAt ? [expiresAt.getTime()] : []));
  return { count: valid.length, overlapEndsAt: ends.length > 0 ? new Date(Math.max(...ends)) : null };
}

/** Where delivery resumes, as the cursor `redeliver --since` and the REST list take; null before any pet. */
const cursorOf = (position: number) => (position > 0 ? encodeCursor(position) : null);

/** One endpoint as every --json answer shows it: never a secret, only how many are signed with. */
export function endpointJson(endpoint: WebhookEndpoint, now: Date) {
  const { id, url, keyId, status, state, stateReason, position, createdAt } = endpoint;
  const { count, overlapEndsAt } = signing(endpoint, now);
  const cursor = cursorOf(position);
  return { id, url, keyId, status, state, stateReason, position, cursor, secrets: count, overlapEndsAt, createdAt };
}

function secretLines(secret: string): string[] {
  return [
    '',
    `  ${secret}`,
    '',
    'This is the only time the signing secret is shown: give it to the receiver now (a secret manager, not a chat).',
    'It stays in the database, because signing needs it, but no command shows it again; rotate-secret replaces it.',
  ];
}

const whichPets = (endpoint: WebhookEndpoint) =>
  endpoint.status === null ? 'every pet' : `every pet with the status ${endpoint.status}`;
/** Where delivery resumes, in words: after a pet, or from the first one (an endpoint added to an empty store). */
const resumes = (position: number) =>
  position > 0 ? `after pet ${position} (cursor ${encodeCursor(position)})` : 'from the first pet';

export function addedAnswer(endpoint: WebhookEndpoint, secret: string, key: ApiKeyRecord, json: boolean): string {
  if (json) return jsonAnswer({ ...endpointJson(endpoint, endpoint.createdAt), secret });
  return [
    `Added endpoint ${endpoint.id} for ${endpoint.url}, on behalf of key ${key.id} (${key.name}).`,
    `It gets pet.created for ${whichPets(endpoint)} created from now on, ${resumes(endpoint.position)}.`,
    `Running services start delivering to it within 2 s; deliveries stop while the key is revoked, expired or lacks pets:read.`,
    ...secretLines(secret),
    `Disable it with: npm run webhooks -- disable ${endpoint.id}`,
    '',
  ].join('\n');
}

export function rotatedAnswer(endpoint: WebhookEndpoint, secret: string, now: Date, json: boolean): string {
  if (json) return jsonAnswer({ ...endpointJson(endpoint, now), secret });
  const { overlapEndsAt } = signing(endpoint, now);
  const old = overlapEndsAt
    ? `Messages are signed with both the new and the old secret until ${secondDate(overlapEndsAt)}: ` +
      'give the receiver the new one before then.'
    : 'The old secret is dropped: receivers verifying with it fail once running services reload the endpoint.';
  return [
    `Rotated the signing secret of ${endpoint.id} (${endpoint.url}).`,
    old,
    'Running services sign with the new secret within 2 s (while they can read the database).',
    ...secretLines(secret),
    '',
  ].join('\n');
}

export function listAnswer(endpoints: WebhookEndpoint[], now: Date, json: boolean): string {
  if (json) return jsonAnswer(endpoints.map((endpoint) => endpointJson(endpoint, now)));
  if (endpoints.length === 0) return 'No webhook endpoints.\n';
  return table([
    ['ID', 'URL', 'KEY', 'STATUS', 'STATE', 'AFTER', 'SECRETS', 'CREATED', 'REASON'],
    ...endpoints.map((endpoint) => {
      const { count, overlapEndsAt } = signing(endpoint, now);
      return [
        endpoint.id,
        endpoint.url,
        endpoint.keyId,
        endpoint.status ?? 'any',
        endpoint.state,
        cursorOf(endpoint.position) ?? '-',
        overlapEndsAt ? `${count}, old until ${shortDate(overlapEndsAt)}` : String(count),
        shortDate(endpoint.createdAt),
        endpoint.stateReason ?? '-',
      ];
    }),
  ]);
}

export function deliveriesAnswer(endpoint: WebhookEndpoint, attempts: DeliveryAttempt[], json: boolean): string {
  if (json) return jsonAnswer(attempts);
  if (attempts.length === 0) return `No delivery attempts to ${endpoint.id} yet.\n`;
  return table([
    ['TIME', 'WEBHOOK-ID', 'PET', 'ATTEMPT', 'STATUS', 'LATENCY MS', 'OUTCOME', 'ERROR'],
    ...attempts.map((attempt) => [
      secondDate(attempt.at),
      attempt.webhookId,
      String(attempt.petId),
      String(attempt.attempt),
      attempt.status === null ? '-' : String(attempt.status),
      String(attempt.latencyMs),
      attempt.outcome,
      attempt.error ?? '-',
    ]),
  ]);
}

/** What disable, enable and redeliver changed, in the words an operator checks it by. */
export type StateChange = 'disabled' | 'enabled' | 'redelivered';

export function changedAnswer(
  change: StateChange,
  { before, after }: { before: WebhookEndpoint; after: WebhookEndpoint },
  json: boolean,
): string {
  if (json) return jsonAnswer({ ...endpointJson(after, new Date()), previousState: before.state });
  // Disabling an active endpoint says nothing more; leaving another state names it and its reason.
  const was =
    before.state === after.state || before.state === 'active' ? '' : ` (it was ${before.state}${reason(before)})`;
  const from = resumes(after.position);
  const lines = {
    disabled: `Disabled ${after.id} (${after.url})${was}. Pets created meanwhile wait: enable delivers them, ${from}.`,
    enabled: `Enabled ${after.id} (${after.url})${was}: delivery resumes ${from}.`,
    redelivered: `${after.id} (${after.url}) is active${was}: delivery starts again ${from}.`,
  };
  return `${lines[change]}\n${TAKES_EFFECT}\n`;
}

const reason = (endpoint: WebhookEndpoint) => (endpoint.stateReason ? `: ${endpoint.stateReason}` : '');

export function removedAnswer(endpoint: WebhookEndpoint, json: boolean): string {
  if (json) return jsonAnswer({ id: endpoint.id, url: endpoint.url, removed: true });
  return `Removed ${endpoint.id} (${endpoint.url}) and its delivery log. ${TAKES_EFFECT}\n`;
}
