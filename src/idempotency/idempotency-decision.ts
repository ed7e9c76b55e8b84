import { createHash } from 'node:crypto';
import type { NewPet, Pet } from '../pets/pet.ts';
import type { IdempotencyRecord } from './idempotency-store.ts';

/**
 * A pet id can collide with another create only on a counter that is not atomic (FerretDB across
 * instances); each move resyncs the counter and pauses a random moment, as a plain create's retries do.
 */
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
 * The protocol of a create with a key, as a pure function: a retry with the same pet gets that pet,
 * another pet under the key is refused, a request that may still run is waited for, and a request
 * that ended before storing its pet is finished, under the id it recorded, once.
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
