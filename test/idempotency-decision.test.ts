import { describe, expect, it } from 'vitest';
import { PetIdsContendedError } from '../src/errors.ts';
import { fromDomainError } from '../src/graphql/errors.ts';
import type { IdempotencyRecord } from '../src/idempotency/idempotency-store.ts';
import { decideNext, type Facts, fingerprintOf, MAX_ID_MOVES } from '../src/idempotency/idempotent-create.ts';
import type { Pet } from '../src/pets/pet.ts';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const newPet = { name: 'Rex', categoryId: 3, status: 'available' as const };
const facts: Facts = { fingerprint: fingerprintOf(newPet), now: NOW, retentionMs: 86_400_000, leaseMs: 10_000 };
const recordMade = (msAgo: number, fingerprint = facts.fingerprint): IdempotencyRecord => ({
  _id: 'key_1 abc',
  fingerprint,
  petId: 41,
  createdAt: new Date(NOW - msAgo),
});
const theirPet: Pet = { id: 41, ...newPet };
const otherPet: Pet = { id: 41, name: 'Someone else', categoryId: 3 };

describe('a create with an Idempotency-Key, after reading the record', () => {
  it('claims a key nobody used', () => {
    expect(decideNext({ saw: 'record', record: null }, facts)).toEqual({ do: 'claim' });
  });

  it('forgets a record past the retention, to the millisecond', () => {
    const expired = recordMade(facts.retentionMs);
    expect(decideNext({ saw: 'record', record: expired }, facts)).toEqual({ do: 'forget-expired', record: expired });
    const live = recordMade(facts.retentionMs - 1);
    expect(decideNext({ saw: 'record', record: live }, facts)).toEqual({ do: 'read-pet', record: live });
  });

  it('refuses a live key used for another pet', () => {
    const record = recordMade(1_000, fingerprintOf({ name: 'Other', categoryId: 3 }));
    expect(decideNext({ saw: 'record', record }, facts)).toEqual({ do: 'refuse-reused' });
  });

  it('reads the pet a live key of the same request recorded', () => {
    const record = recordMade(1_000);
    expect(decideNext({ saw: 'record', record }, facts)).toEqual({ do: 'read-pet', record });
  });
});

describe('a create with a key, after reading the recorded pet', () => {
  it('replays the pet when it is stored', () => {
    expect(decideNext({ saw: 'pet', record: recordMade(60_000), pet: theirPet }, facts)).toEqual({
      do: 'answer',
      pet: theirPet,
      replayed: true,
    });
  });

  it('tells the client to wait while the first request may still run, in whole seconds, at least 1', () => {
    expect(decideNext({ saw: 'pet', record: recordMade(1_000), pet: null }, facts)).toEqual({
      do: 'refuse-in-use',
      retryAfterSeconds: 9,
    });
    expect(decideNext({ saw: 'pet', record: recordMade(9_999), pet: otherPet }, facts)).toEqual({
      do: 'refuse-in-use',
      retryAfterSeconds: 1,
    });
  });

  it('finishes the work of a request that ended without storing the pet', () => {
    const record = recordMade(10_000);
    expect(decideNext({ saw: 'pet', record, pet: null }, facts)).toEqual({ do: 'store', record });
    expect(decideNext({ saw: 'pet', record, pet: otherPet }, facts)).toEqual({ do: 'store', record });
  });
});

describe('a create with a key, after its own writes', () => {
  it('reads the record again after deleting an expired one or losing the claim, three times at most', () => {
    expect(decideNext({ saw: 'outdated', reads: 1 }, facts)).toEqual({ do: 'read-record' });
    expect(decideNext({ saw: 'outdated', reads: 2 }, facts)).toEqual({ do: 'read-record' });
    expect(decideNext({ saw: 'outdated', reads: 3 }, facts)).toEqual({ do: 'refuse-in-use', retryAfterSeconds: 1 });
  });

  it('stores the pet once it holds the record, and answers with it, not replayed', () => {
    const record = recordMade(0);
    expect(decideNext({ saw: 'held', record }, facts)).toEqual({ do: 'store', record });
    expect(decideNext({ saw: 'stored', pet: theirPet }, facts)).toEqual({
      do: 'answer',
      pet: theirPet,
      replayed: false,
    });
  });

  it('replays when the id is taken by this very pet (an earlier answer was lost)', () => {
    const observed = { saw: 'id-taken', record: recordMade(20_000), pet: theirPet, times: 4 } as const;
    expect(decideNext(observed, facts)).toEqual({ do: 'answer', pet: theirPet, replayed: true });
  });

  it('moves the record to a fresh id when another pet took it, MAX_ID_MOVES times at most', () => {
    const record = recordMade(20_000);
    for (const pet of [otherPet, null]) {
      const times = MAX_ID_MOVES;
      expect(decideNext({ saw: 'id-taken', record, pet, times }, facts)).toEqual({ do: 'move-pet-id', record });
    }
    expect(decideNext({ saw: 'id-taken', record, pet: otherPet, times: MAX_ID_MOVES + 1 }, facts)).toEqual({
      do: 'fail-id-taken',
      petId: 41,
    });
  });

  it('answers ids contended past MAX_ID_MOVES as a 503 to retry with the same key, never a 500', () => {
    const answer = fromDomainError(new PetIdsContendedError(41));
    expect(answer.extensions).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      http: { status: 503, headers: { 'Retry-After': '1' } },
    });
    expect(answer.message).toMatch(/nothing was stored: retry \(with the same Idempotency-Key/);
  });

  it('follows a record another request moved first, so the two store one pet', () => {
    const moved = { ...recordMade(20_000), petId: 57 };
    expect(decideNext({ saw: 'move-lost', record: moved }, facts)).toEqual({ do: 'store', record: moved });
  });

  it('tells the client to wait when the record it was moving is gone or belongs to another request', () => {
    const refused = { do: 'refuse-in-use', retryAfterSeconds: 1 };
    expect(decideNext({ saw: 'move-lost', record: null }, facts)).toEqual(refused);
    const replaced = recordMade(0, fingerprintOf({ name: 'Other', categoryId: 1 }));
    expect(decideNext({ saw: 'move-lost', record: replaced }, facts)).toEqual(refused);
  });
});

describe('the fingerprint of a request', () => {
  it('is the pet asked for, whatever the order of its fields, and tells a missing status from one', () => {
    expect(fingerprintOf({ status: 'sold', categoryId: 1, name: 'A' })).toBe(
      fingerprintOf({ name: 'A', categoryId: 1, status: 'sold' }),
    );
    expect(fingerprintOf({ name: 'A', categoryId: 1 })).not.toBe(
      fingerprintOf({ name: 'A', categoryId: 1, status: 'sold' }),
    );
  });
});
