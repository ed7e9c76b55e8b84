import { randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { DATABASE_DEADLINE_MS, withDeadline, withSignal } from '../db/deadline.ts';
import type { PetStatus } from '../pets/pet.ts';

export const WEBHOOK_ENDPOINTS_COLLECTION = 'webhookEndpoints';
export const WEBHOOK_DELIVERIES_COLLECTION = 'webhookDeliveries';
/** Attempts kept per endpoint: FerretDB has no TTL index, so the dispatcher prunes down to this. */
export const DELIVERIES_KEPT_PER_ENDPOINT = 1_000;
/** Standard Webhooks' secret prefix; 32 random bytes, base64 (the spec asks for 24 to 64). */
export const SECRET_PREFIX = 'whsec_';

/** active: delivered to; disabled: by an operator or a 410; failing: retries ran out, waiting for an operator. */
export type EndpointState = 'active' | 'disabled' | 'failing';

/** A signing secret; one with an expiry is the old one of a rotation, still signed with until then. */
export interface EndpointSecret {
  secret: string;
  expiresAt: Date | null;
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  /** The issued key the endpoint belongs to: deliveries stop while it is revoked, expired or lacks pets:read. */
  keyId: string;
  /** Only pets of this status, or every pet. */
  status: PetStatus | null;
  secrets: EndpointSecret[];
  state: EndpointState;
  /** Why the state is what it is, for operators: 'disabled by an operator', 'the receiver answered 410'... */
  stateReason: string | null;
  /** The highest pet id acknowledged with a 2xx (or passed over by the status): delivery resumes after it. */
  position: number;
  /** Moved by every operator change: a dispatcher serving an older revision starts again from the store. */
  revision: number;
  createdAt: Date;
}

/** One attempt to deliver one message, as `webhooks deliveries` shows it. */
export interface DeliveryAttempt {
  endpointId: string;
  webhookId: string;
  petId: number;
  /** 1 for the first attempt of a message; counted again from 1 after an operator's redeliver or enable. */
  attempt: number;
  at: Date;
  status: number | null;
  latencyMs: number;
  error: string | null;
  outcome: DeliveryOutcome;
}

/** delivered: a 2xx; retrying: another attempt is scheduled; failed: the schedule's last; gone: a 410. */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'gone';

type EndpointDocument = Omit<WebhookEndpoint, 'id'> & { _id: string };

const bounded = <T>(work: (signal: AbortSignal) => Promise<T>) => withDeadline(DATABASE_DEADLINE_MS, work);

export const newSecret = () => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

const toEndpoint = ({ _id, ...rest }: EndpointDocument): WebhookEndpoint => ({ id: _id, ...rest });

/** Ids as the store makes them: anything else is not echoed back by the command (it may be a pasted secret). */
export const ENDPOINT_ID = /^whe_[0-9a-f]{16}$/;

/** Bounded like every other call here, so neither the service's start nor `webhooks add` can hang on it. */
export async function ensureWebhookIndexes(db: Db): Promise<void> {
  const deliveries = db.collection(WEBHOOK_DELIVERIES_COLLECTION);
  await bounded((signal) => deliveries.createIndex({ endpointId: 1, at: -1 }, withSignal({}, signal)));
}

/** What operators do (the `webhooks` command): each change moves the revision, so every dispatcher reloads the endpoint. */
function operatorChanges(endpoints: Collection<EndpointDocument>) {
  async function change(id: string, set: Partial<EndpointDocument>): Promise<WebhookEndpoint | null> {
    const found = await bounded((signal) =>
      endpoints.findOneAndUpdate(
        { _id: id },
        { $set: set, $inc: { revision: 1 } },
        withSignal({ returnDocument: 'after' as const }, signal),
      ),
    );
    return found ? toEndpoint(found) : null;
  }

  async function get(id: string): Promise<WebhookEndpoint | null> {
    const found = await bounded((signal) => endpoints.findOne({ _id: id }, { signal }));
    return found ? toEndpoint(found) : null;
  }

  return {
    async add(input: { url: string; keyId: string; status: PetStatus | null; position: number; now?: Date }) {
      const doc: EndpointDocument = {
        _id: `whe_${randomBytes(8).toString('hex')}`,
        ...{ url: input.url, keyId: input.keyId, status: input.status, position: input.position },
        secrets: [{ secret: newSecret(), expiresAt: null }],
        ...{ state: 'active', stateReason: null, revision: 1, createdAt: input.now ?? new Date() },
      };
      await bounded((signal) => endpoints.insertOne(doc, withSignal({}, signal)));
      return toEndpoint(doc);
    },
    get,
    /** Active again, from its position: the message it stopped at is delivered first. */
    enable: (id: string) => change(id, { state: 'active', stateReason: null }),
    disable: (id: string, reason = 'disabled by an operator') => change(id, { state: 'disabled', stateReason: reason }),
    /** Delivery starts again after `afterId` (a cursor's pet), active whatever the state was. */
    rewind: (id: string, afterId: number) => change(id, { position: afterId, state: 'active', stateReason: null }),
    /** A new secret first; the current ones are still signed with until `overlapMs` from now (0: dropped now). */
    async rotateSecret(id: string, overlapMs: number, now = new Date()) {
      const found = await get(id);
      if (!found) return null;
      const until = new Date(now.getTime() + overlapMs);
      const kept = found.secrets
        .filter((old) => overlapMs > 0 && (old.expiresAt === null || old.expiresAt > now))
        .map((old) => ({
          secret: old.secret,
          expiresAt: old.expiresAt && old.expiresAt < until ? old.expiresAt : until,
        }));
      const secret = newSecret();
      const updated = await change(id, { secrets: [{ secret, expiresAt: null }, ...kept] });
      return updated ? { endpoint: updated, secret } : null;
    },
  };
}

/** What the dispatcher writes, only on the revision it serves: an operator's change since wins. */
function dispatcherMoves(endpoints: Collection<EndpointDocument>) {
  return {
    /** The receiver acknowledged `petId`: delivery resumes after it, on any instance, after any restart. */
    async advance(id: string, revision: number, petId: number): Promise<void> {
      await bounded((signal) =>
        endpoints.updateOne(
          { _id: id, revision, position: { $lt: petId } },
          { $set: { position: petId } },
          withSignal({}, signal),
        ),
      );
    },
    /** The receiver said 410, or retries ran out: the endpoint stops until an operator acts. */
    async stop(id: string, revision: number, state: Exclude<EndpointState, 'active'>, reason: string): Promise<void> {
      await bounded((signal) =>
        endpoints.updateOne(
          { _id: id, revision },
          { $set: { state, stateReason: reason }, $inc: { revision: 1 } },
          withSignal({}, signal),
        ),
      );
    },
  };
}

/** One document per attempt; FerretDB has no TTL index, so the dispatcher prunes each endpoint's to its newest. */
function deliveryLog(deliveries: Collection<DeliveryAttempt>) {
  return {
    async record(attempt: DeliveryAttempt): Promise<void> {
      await bounded((signal) => deliveries.insertOne({ ...attempt }, withSignal({}, signal)));
    },
    /** An endpoint's attempts, newest first. */
    async deliveries(endpointId: string, limit: number): Promise<DeliveryAttempt[]> {
      const projection = { _id: 0 } as const;
      return bounded((signal) =>
        deliveries.find({ endpointId }, { projection, signal }).sort({ at: -1 }).limit(limit).toArray(),
      );
    },
    /** Drops each endpoint's attempts beyond the newest DELIVERIES_KEPT_PER_ENDPOINT; returns how many went. */
    async prune(endpointIds: readonly string[]): Promise<number> {
      let removed = 0;
      for (const endpointId of endpointIds) {
        const [oldestKept] = await bounded((signal) =>
          deliveries
            .find({ endpointId }, { projection: { at: 1 }, signal })
            .sort({ at: -1 })
            .skip(DELIVERIES_KEPT_PER_ENDPOINT - 1)
            .limit(1)
            .toArray(),
        );
        if (!oldestKept) continue;
        const { deletedCount } = await bounded((signal) =>
          deliveries.deleteMany({ endpointId, at: { $lt: oldestKept.at } }, withSignal({}, signal)),
        );
        removed += deletedCount;
      }
      return removed;
    },
  };
}

/**
 * The `webhookEndpoints` and `webhookDeliveries` collections, shared by the service (which delivers)
 * and the `webhooks` command (which registers and operates endpoints). Secrets are stored as they are:
 * signing needs them; they leave the store only in `add` and `rotate-secret`'s answers and in signatures.
 */
export function createWebhookStore(db: Db) {
  const endpoints = db.collection<EndpointDocument>(WEBHOOK_ENDPOINTS_COLLECTION);
  const deliveries = db.collection<DeliveryAttempt>(WEBHOOK_DELIVERIES_COLLECTION);
  return {
    ...operatorChanges(endpoints),
    ...dispatcherMoves(endpoints),
    ...deliveryLog(deliveries),
    /** Every endpoint, oldest first. */
    async list(): Promise<WebhookEndpoint[]> {
      const docs = await bounded((signal) => endpoints.find({}, { signal }).toArray());
      return docs
        .map(toEndpoint)
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
    },
    /** The endpoint and its delivery log. */
    async remove(id: string): Promise<boolean> {
      const { deletedCount } = await bounded((signal) => endpoints.deleteOne({ _id: id }, withSignal({}, signal)));
      await bounded((signal) => deliveries.deleteMany({ endpointId: id }, withSignal({}, signal)));
      return deletedCount === 1;
    },
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
