import { createHmac } from 'node:crypto';
import { encodeCursor } from '../pets/cursor.ts';
import type { Pet } from '../pets/pet.ts';
import { type EndpointSecret, SECRET_PREFIX } from './webhook-store.ts';

export const PET_CREATED = 'pet.created';

/**
 * What a receiver gets for a new pet, as Standard Webhooks lays a payload out: `type`, `timestamp`
 * (when the message was first sent), `data` (the pet as `GET /v1/pets/{petId}` answers it) and the
 * pet's `cursor`, the same as `GET /v1/pets?cursor=` and the subscription's `after` take.
 */
export function petCreatedBody(pet: Pet, firstSentAt: Date): string {
  const { id, name, categoryId, status } = pet;
  const data = status === undefined ? { id, name, categoryId } : { id, name, categoryId, status };
  return JSON.stringify({ type: PET_CREATED, timestamp: firstSentAt.toISOString(), data, cursor: encodeCursor(id) });
}

/** The same for every attempt at one pet for one endpoint, and after a restart: receivers deduplicate by it. */
export const webhookIdOf = (endpointId: string, petId: number) => `msg_${endpointId.slice('whe_'.length)}_${petId}`;

/**
 * Standard Webhooks' headers for one attempt: `webhook-signature` holds a `v1,<base64 HMAC-SHA256 of
 * id.timestamp.body>` per secret still valid at `now` (two during a rotation's overlap), so a receiver
 * holding either secret verifies.
 */
export function signedHeaders(
  secrets: readonly EndpointSecret[],
  { webhookId, body, now }: { webhookId: string; body: string; now: Date },
): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signed = `${webhookId}.${timestamp}.${body}`;
  const signatures = secrets
    .filter(({ expiresAt }) => expiresAt === null || expiresAt > now)
    .map(({ secret }) => {
      const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
      return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
    });
  return { 'webhook-id': webhookId, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}
