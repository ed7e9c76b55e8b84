import { createHash } from 'node:crypto';
import {
  DatabaseUnavailableError,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  PetIdTakenError,
} from '../errors.ts';
import type { NewPet, Pet } from '../pets/pet.ts';
import type { PetRepository } from '../pets/pet-repository.ts';
import { type IdempotencyRecord, type IdempotencyStore, idempotencyRecordId } from './idempotency-store.ts';

/** How long records are kept by default, as Stripe does: a day covers any sensible retry schedule. */
export const DEFAULT_IDEMPOTENCY_RETENTION_HOURS = 24;
/**
 * A record whose pet is not stored yet belongs to a request that may still be running for this long
 * (a create with a key answers within CREATE_DEADLINE_MS); past it, the request is over and a retry
 * finishes its work. Should two finish at once, the unique pet _id and the conditional move of the
 * record's id still leave one pet.
 */
export const IDEMPOTENCY_LEASE_MS = 10_000;
/** The whole of a create with a key, look-ups included: its 503 must reach the client within 6 s. */
export const CREATE_DEADLINE_MS = 5_500;
/** A pet id can collide with another create only on a counter that is not atomic; a few tries suffice. */
const MAX_ID_MOVES = 3;

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

/** What makes two creates "the same request": the pet they ask for, however its JSON was spelled. */
export function fingerprintOf(newPet: NewPet): string {
  const meaning = JSON.stringify(['createPet', newPet.name, newPet.categoryId, newPet.status ?? null]);
  return createHash('sha256').update(meaning).digest('hex');
}

const samePet = (pet: Pet, newPet: NewPet) =>
  pet.name === newPet.name && pet.categoryId === newPet.categoryId && pet.status === newPet.status;

/**
 * Creates with an Idempotency-Key (IETF draft, Stripe's behaviour): the first request with a key
 * records the pet id it will use before storing the pet; a retry with the same key and the same pet
 * gets that pet back, even when the first request's answer was lost in an outage, and no second pet
 * is ever stored; another pet under the same key is refused (422); a retry while the first request
 * may still run is told to wait (409). Records older than the retention count as never made.
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

  function inUse(record: IdempotencyRecord): IdempotencyKeyInUseError {
    const left = record.createdAt.getTime() + IDEMPOTENCY_LEASE_MS - now();
    return new IdempotencyKeyInUseError(Math.max(1, Math.ceil(left / 1000)));
  }

  /** Stores the record's pet under its id, moving to a fresh id if a different pet took that one. */
  async function finish(record: IdempotencyRecord, newPet: NewPet, clientGone: () => boolean) {
    let petId = record.petId;
    for (let move = 0; ; move++) {
      try {
        return { pet: await pets.create(newPet, { id: petId, clientGone }), replayed: false };
      } catch (error) {
        if (!(error instanceof PetIdTakenError)) throw error;
      }
      // Taken: by this record's own earlier insert (its answer lost), or, on a non-atomic counter, by another create.
      const stored = await pets.findById(petId);
      if (stored && samePet(stored, newPet)) return { pet: stored, replayed: true };
      if (move >= MAX_ID_MOVES) throw new PetIdTakenError(petId);
      const fresh = await pets.allocateId({ clientGone });
      if (await records.movePetId(record._id, petId, fresh)) {
        petId = fresh;
        continue;
      }
      // Another request moved the record first: follow it to the id it chose (the fresh one is dropped).
      const moved = await records.find(record._id);
      if (!moved || moved.fingerprint !== record.fingerprint) throw new IdempotencyKeyInUseError(1);
      petId = moved.petId;
    }
  }

  /** A key seen before: replay its pet, refuse another pet, or finish what an ended request began. */
  async function resume(
    record: IdempotencyRecord,
    fingerprint: string,
    newPet: NewPet,
    clientGone: () => boolean,
  ): Promise<IdempotentCreateResult> {
    if (record.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
    const stored = await pets.findById(record.petId);
    if (stored && samePet(stored, newPet)) return { pet: stored, replayed: true };
    // Not stored yet (or its id collided and is about to move): the first request may still be at it.
    if (now() < record.createdAt.getTime() + IDEMPOTENCY_LEASE_MS) throw inUse(record);
    // The request that made the record ended without storing the pet: this one stores it, once.
    return finish(record, newPet, clientGone);
  }

  async function createOnce(id: string, newPet: NewPet, clientGone: () => boolean): Promise<IdempotentCreateResult> {
    const fingerprint = fingerprintOf(newPet);
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await records.find(id);
      if (existing && existing.createdAt.getTime() <= now() - retentionMs) {
        await records.forget(existing);
        continue;
      }
      if (existing) return resume(existing, fingerprint, newPet, clientGone);
      const record: IdempotencyRecord = {
        _id: id,
        fingerprint,
        petId: await pets.allocateId({ clientGone }),
        createdAt: new Date(now()),
      };
      // Another instance may claim the same key between the lookup and here: then resume theirs.
      if (await records.claim(record)) return finish(record, newPet, clientGone);
    }
    // Claimed and expired over and over: only a clock far out of step with the records does that.
    throw new IdempotencyKeyInUseError(1);
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
      const work = createOnce(id, newPet, request.clientGone).finally(() => running.delete(id));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new DatabaseUnavailableError({ cause: new Error(`no answer within ${CREATE_DEADLINE_MS} ms`) })),
          CREATE_DEADLINE_MS,
        );
      });
      work.catch(() => {}); // Its failure after the deadline has nobody to answer: the 503 went out.
      try {
        const result = await Promise.race([work, late]);
        if (result.replayed) options.onReplay?.();
        return result;
      } finally {
        clearTimeout(timer);
      }
    },

    /** Deletes records past the retention; every instance may run it, the deletes simply overlap. */
    purgeExpired: () => records.purgeCreatedBefore(new Date(now() - retentionMs)),
  };
}

export type IdempotentCreates = ReturnType<typeof createIdempotentCreates>;
