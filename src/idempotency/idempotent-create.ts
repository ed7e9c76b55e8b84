import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { withDeadline } from '../db/deadline.ts';
import {
  DomainError,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  PetIdsContendedError,
  PetIdTakenError,
} from '../errors.ts';
import type { CreatedPet } from '../pets/create-pet.ts';
import type { NewPet, Pet } from '../pets/pet.ts';
import type { PetRepository } from '../pets/pet-repository.ts';
import { type IdempotencyRecord, type IdempotencyStore, idempotencyRecordId } from './idempotency-store.ts';

/** How long records are kept by default, as Stripe does: a day covers any sensible retry schedule. */
export const DEFAULT_IDEMPOTENCY_RETENTION_HOURS = 24;
/** A record without its pet may belong to a request still running this long; then a retry finishes it. */
export const IDEMPOTENCY_LEASE_MS = 10_000;
/** The whole of a create with a key, look-ups included: its 503 must reach the client within 6 s. */
export const CREATE_DEADLINE_MS = 5_500;

/** Ids collide only on a non-atomic counter (FerretDB across instances); each move resyncs it first. */
export const MAX_ID_MOVES = 10;
/** Records found expired or claimed under us this many times: only a clock far out of step does that. */
const MAX_RECORD_READS = 3;

/** What makes two creates "the same request": the pet they ask for, however its JSON was spelled. */
export function fingerprintOf(newPet: NewPet): string {
  const meaning = JSON.stringify(['createPet', newPet.name, newPet.categoryId, newPet.status ?? null]);
  return createHash('sha256').update(meaning).digest('hex');
}

/** What a create with an Idempotency-Key learnt from its last read or write. */
export type Observation =
  /** The key's record (null: none). */
  | { saw: 'record'; record: IdempotencyRecord | null }
  /** The pet stored under a live record's id, this request's fingerprint (null: none yet). */
  | { saw: 'pet'; record: IdempotencyRecord; pet: Pet | null }
  /** The record read is no longer there: this request deleted it as expired, or lost the claim. */
  | { saw: 'outdated'; reads: number }
  /** This request holds the record at its pet id: it claimed the key or moved the record's id. */
  | { saw: 'held'; record: IdempotencyRecord }
  | { saw: 'stored'; pet: Pet }
  /** Storing under the record's id found it taken (the `times`th time); `pet` is what holds it. */
  | { saw: 'id-taken'; record: IdempotencyRecord; pet: Pet | null; times: number }
  /** Another request moved the record first; what it says now. */
  | { saw: 'move-lost'; record: IdempotencyRecord | null };

/** What to do next: a read or write, or the answer. */
export type Next =
  | { do: 'read-record' }
  | { do: 'forget-expired'; record: IdempotencyRecord }
  /** Allocate a pet id and claim the key with it. */
  | { do: 'claim' }
  | { do: 'read-pet'; record: IdempotencyRecord }
  /** Store the pet under the record's id: this request's, or one an ended request left unfinished. */
  | { do: 'store'; record: IdempotencyRecord }
  /** The record's id went to another pet: move the record to a fresh id. */
  | { do: 'move-pet-id'; record: IdempotencyRecord }
  | { do: 'answer'; pet: Pet; replayed: boolean }
  | { do: 'refuse-reused' }
  | { do: 'refuse-in-use'; retryAfterSeconds: number }
  | { do: 'fail-id-taken'; petId: number };

export interface Facts {
  /** This request's fingerprint. */
  fingerprint: string;
  now: number;
  retentionMs: number;
  /** How long a record without its pet may belong to a request still running. */
  leaseMs: number;
}

/**
 * The protocol of a create with a key, as a pure function: a retry gets the same pet, another pet is
 * refused, a running request is waited for, and an unfinished one is finished under its recorded id.
 */
export function decideNext(observed: Observation, facts: Facts): Next {
  const samePet = (pet: Pet | null): pet is Pet => pet !== null && fingerprintOf(pet) === facts.fingerprint;
  switch (observed.saw) {
    case 'record': {
      const { record } = observed;
      if (record === null) return { do: 'claim' };
      if (record.createdAt.getTime() <= facts.now - facts.retentionMs) return { do: 'forget-expired', record };
      if (record.fingerprint !== facts.fingerprint) return { do: 'refuse-reused' };
      return { do: 'read-pet', record };
    }
    case 'pet': {
      const { record, pet } = observed;
      if (samePet(pet)) return { do: 'answer', pet, replayed: true };
      const leaseLeft = record.createdAt.getTime() + facts.leaseMs - facts.now;
      if (leaseLeft > 0) return { do: 'refuse-in-use', retryAfterSeconds: Math.max(1, Math.ceil(leaseLeft / 1000)) };
      return { do: 'store', record };
    }
    case 'outdated':
      return observed.reads >= MAX_RECORD_READS ? { do: 'refuse-in-use', retryAfterSeconds: 1 } : { do: 'read-record' };
    case 'held':
      return { do: 'store', record: observed.record };
    case 'stored':
      return { do: 'answer', pet: observed.pet, replayed: false };
    case 'id-taken': {
      const { record, pet, times } = observed;
      // Taken by this record's own earlier insert (its answer lost), or, on a non-atomic counter, by another create.
      if (samePet(pet)) return { do: 'answer', pet, replayed: true };
      if (times > MAX_ID_MOVES) return { do: 'fail-id-taken', petId: record.petId };
      return { do: 'move-pet-id', record };
    }
    case 'move-lost': {
      const { record } = observed;
      // Follow the record to the id the other request chose, so the two cannot store two pets.
      if (record === null || record.fingerprint !== facts.fingerprint)
        return { do: 'refuse-in-use', retryAfterSeconds: 1 };
      return { do: 'store', record };
    }
  }
}

export interface IdempotentCreateRequest {
  /** The API key's id: Idempotency-Keys are scoped per API key. */
  apiKeyId: string;
  idempotencyKey: string;
  clientGone: () => boolean;
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

  async function createOnce(attempt: Attempt): Promise<CreatedPet> {
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
    async create(newPet: NewPet, request: IdempotentCreateRequest): Promise<CreatedPet> {
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

/** Expired records are found on lookup anyway; the purge only keeps the collection from growing. */
export const PURGE_EVERY_MS = 10 * 60_000;

/** Deletes expired records now and every PURGE_EVERY_MS (FerretDB has no TTL index); returns the stop. */
export function schedulePurge(creates: IdempotentCreates, logger: Logger, everyMs = PURGE_EVERY_MS): () => void {
  const purge = () =>
    void creates.purgeExpired().then(
      (deleted) => {
        if (deleted > 0) logger.info({ deleted }, 'purged expired Idempotency-Key records');
      },
      (error: unknown) => {
        // An unavailable or full database is a condition, said in a line; anything else keeps its stack.
        const about =
          error instanceof DomainError && error.expected ? { code: error.code, reason: error.message } : { err: error };
        logger.warn(about, 'purging expired Idempotency-Key records failed');
      },
    );
  purge();
  const timer = setInterval(purge, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
