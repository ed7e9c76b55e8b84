import { withDeadline } from '../db/deadline.ts';
import {
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  PetIdsContendedError,
  PetIdTakenError,
} from '../errors.ts';
import type { NewPet, Pet } from '../pets/pet.ts';
import type { PetRepository } from '../pets/pet-repository.ts';
import { decideNext, fingerprintOf, MAX_ID_MOVES, type Next, type Observation } from './idempotency-decision.ts';
import { type IdempotencyRecord, type IdempotencyStore, idempotencyRecordId } from './idempotency-store.ts';

export { fingerprintOf };

/** How long records are kept by default, as Stripe does: a day covers any sensible retry schedule. */
export const DEFAULT_IDEMPOTENCY_RETENTION_HOURS = 24;
/**
 * A record without its pet may belong to a request still running this long (it answers within
 * CREATE_DEADLINE_MS); then a retry finishes its work.
 */
export const IDEMPOTENCY_LEASE_MS = 10_000;
/** The whole of a create with a key, look-ups included: its 503 must reach the client within 6 s. */
export const CREATE_DEADLINE_MS = 5_500;

export interface IdempotentCreateRequest {
  /** The API key's id: Idempotency-Keys are scoped per API key. */
  apiKeyId: string;
  idempotencyKey: string;
  clientGone: () => boolean;
}

export interface IdempotentCreateResult {
  pet: Pet;
  /** True when the pet was created by an earlier request with this key, not by this one. */
  replayed: boolean;
}

type Step = Exclude<Next, { do: 'answer' }>;

interface Attempt {
  /** The record's id. */
  id: string;
  newPet: NewPet;
  fingerprint: string;
  clientGone: () => boolean;
}

/** The reads and writes of one create's steps; each step reports what it saw, for decideNext. */
function stepsOf(
  { pets, records, now }: { pets: PetRepository; records: IdempotencyStore; now: () => number },
  { id, newPet, fingerprint, clientGone }: Attempt,
): (step: Step) => Promise<Observation> {
  let reads = 0;
  let idTaken = 0;

  async function store(record: IdempotencyRecord): Promise<Observation> {
    try {
      return { saw: 'stored', pet: await pets.create(newPet, { id: record.petId, clientGone }) };
    } catch (error) {
      if (!(error instanceof PetIdTakenError)) throw error;
    }
    idTaken++;
    return { saw: 'id-taken', record, pet: await pets.findById(record.petId), times: idTaken };
  }

  return async (step) => {
    switch (step.do) {
      case 'read-record':
        reads++;
        return { saw: 'record', record: await records.find(id) };
      case 'forget-expired':
        await records.forget(step.record);
        return { saw: 'outdated', reads };
      case 'claim': {
        const petId = await pets.allocateId({ clientGone });
        const record: IdempotencyRecord = { _id: id, fingerprint, petId, createdAt: new Date(now()) };
        return (await records.claim(record)) ? { saw: 'held', record } : { saw: 'outdated', reads };
      }
      case 'read-pet':
        return { saw: 'pet', record: step.record, pet: await pets.findById(step.record.petId) };
      case 'store':
        return store(step.record);
      case 'move-pet-id': {
        const fresh = await pets.allocateId({ clientGone });
        if (await records.movePetId(id, step.record.petId, fresh)) {
          return { saw: 'held', record: { ...step.record, petId: fresh } };
        }
        return { saw: 'move-lost', record: await records.find(id) };
      }
      case 'refuse-reused':
        throw new IdempotencyKeyReusedError();
      case 'refuse-in-use':
        throw new IdempotencyKeyInUseError(step.retryAfterSeconds);
      case 'fail-id-taken':
        throw new PetIdsContendedError(MAX_ID_MOVES);
    }
  };
}

/**
 * Creates with an Idempotency-Key (IETF draft, Stripe's behaviour); the protocol is decideNext's,
 * this does its reads and writes. Records older than the retention count as never made.
 */
export function createIdempotentCreates(options: {
  pets: PetRepository;
  records: IdempotencyStore;
  retentionMs: number;
  /** Told of every answer replayed from an earlier request (a metric). */
  onReplay?: () => void;
  now?: () => number;
}) {
  const { pets, records, retentionMs } = options;
  const now = options.now ?? Date.now;
  // Requests with a key in this process right now: a concurrent retry is refused without a lookup.
  const running = new Set<string>();

  async function createOnce(attempt: Attempt): Promise<IdempotentCreateResult> {
    const perform = stepsOf({ pets, records, now }, attempt);
    let next: Next = { do: 'read-record' };
    while (next.do !== 'answer') {
      const facts = { fingerprint: attempt.fingerprint, now: now(), retentionMs, leaseMs: IDEMPOTENCY_LEASE_MS };
      next = decideNext(await perform(next), facts);
    }
    return { pet: next.pet, replayed: next.replayed };
  }

  return {
    /**
     * Answers within CREATE_DEADLINE_MS: past it the client gets a 503 while the work goes on, and the
     * key stays "running" here until it ends, so a retry meanwhile is told to wait (409), not run twice.
     */
    async create(newPet: NewPet, request: IdempotentCreateRequest): Promise<IdempotentCreateResult> {
      const id = idempotencyRecordId(request.apiKeyId, request.idempotencyKey);
      if (running.has(id)) throw new IdempotencyKeyInUseError(1);
      running.add(id);
      const result = await withDeadline(CREATE_DEADLINE_MS, () =>
        createOnce({ id, newPet, fingerprint: fingerprintOf(newPet), clientGone: request.clientGone }).finally(() =>
          running.delete(id),
        ),
      );
      if (result.replayed) options.onReplay?.();
      return result;
    },

    /** Deletes records past the retention; every instance may run it, the deletes simply overlap. */
    purgeExpired: () => records.purgeCreatedBefore(new Date(now() - retentionMs)),
  };
}

export type IdempotentCreates = ReturnType<typeof createIdempotentCreates>;
