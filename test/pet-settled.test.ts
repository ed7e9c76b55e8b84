import { describe, expect, it } from 'vitest';
import type { Pet } from '../src/pets/pet.ts';
import { type Gap, settle } from '../src/pets/pet-gaps.ts';
import type { StoredEntry } from '../src/pets/pet-repository.ts';

const SETTLE_MS = 1_000;
const readable = (id: number): StoredEntry => ({ id, pet: { id, name: `pet ${id}`, categoryId: 1 } });
const unreadable = (id: number): StoredEntry => ({ id, pet: null });
const idsOf = (pets: Pet[]) => pets.map((pet) => pet.id);

describe('settling what a read found', () => {
  it('when ids follow each other, then all settle at once', () => {
    const gaps = new Map<number, Gap>();
    const settled = settle(4, [readable(5), readable(6), readable(7)], { gaps, now: 0, settleMs: SETTLE_MS });
    expect(settled).toEqual({ tailId: 7, pets: [readable(5).pet, readable(6).pet, readable(7).pet] });
    expect(gaps.size).toBe(0);
  });

  it('when an id is missing, then what lies beyond waits for the window, then the gap is accepted', () => {
    const gaps = new Map<number, Gap>();
    const held = settle(4, [readable(5), readable(7), readable(8)], { gaps, now: 1_000, settleMs: SETTLE_MS });
    expect({ tailId: held.tailId, ids: idsOf(held.pets), holdUntil: held.holdUntil }).toEqual({
      tailId: 5,
      ids: [5],
      holdUntil: 2_000,
    });
    const still = settle(5, [readable(7), readable(8)], { gaps, now: 1_999, settleMs: SETTLE_MS });
    expect({ tailId: still.tailId, ids: idsOf(still.pets), holdUntil: still.holdUntil }).toEqual({
      tailId: 5,
      ids: [],
      holdUntil: 2_000,
    });
    const accepted = settle(5, [readable(7), readable(8)], { gaps, now: 2_000, settleMs: SETTLE_MS });
    expect({ tailId: accepted.tailId, ids: idsOf(accepted.pets) }).toEqual({ tailId: 8, ids: [7, 8] });
    expect(accepted.holdUntil).toBeUndefined();
    expect(gaps.size).toBe(0);
  });

  it('when the missing id is stored within the window, then everything settles in id order', () => {
    const gaps = new Map<number, Gap>();
    settle(4, [readable(6)], { gaps, now: 0, settleMs: SETTLE_MS });
    const filled = settle(4, [readable(5), readable(6)], { gaps, now: 10, settleMs: SETTLE_MS });
    expect({ tailId: filled.tailId, ids: idsOf(filled.pets) }).toEqual({ tailId: 6, ids: [5, 6] });
  });

  it('when a gap is partly filled, then the rest of it keeps the clock it started with', () => {
    const gaps = new Map<number, Gap>();
    expect(settle(4, [readable(7)], { gaps, now: 0, settleMs: SETTLE_MS }).holdUntil).toBe(1_000);
    const partly = settle(4, [readable(5), readable(7)], { gaps, now: 600, settleMs: SETTLE_MS });
    expect({ tailId: partly.tailId, ids: idsOf(partly.pets), holdUntil: partly.holdUntil }).toEqual({
      tailId: 5,
      ids: [5],
      holdUntil: 1_000,
    });
    const accepted = settle(5, [readable(7)], { gaps, now: 1_000, settleMs: SETTLE_MS });
    expect({ tailId: accepted.tailId, ids: idsOf(accepted.pets) }).toEqual({ tailId: 7, ids: [7] });
    expect(gaps.size).toBe(0);
  });

  it('when a pet is stored inside a gap, then both parts keep its first clock', () => {
    const gaps = new Map<number, Gap>();
    settle(4, [readable(9)], { gaps, now: 0, settleMs: SETTLE_MS });
    settle(4, [readable(7), readable(9)], { gaps, now: 500, settleMs: SETTLE_MS });
    const filled = settle(4, [readable(5), readable(6), readable(7), readable(9)], {
      gaps,
      now: 900,
      settleMs: SETTLE_MS,
    });
    expect({ tailId: filled.tailId, holdUntil: filled.holdUntil }).toEqual({ tailId: 7, holdUntil: 1_000 });
  });

  it('when a second gap lies beyond the first, then its own window counts from when it was first seen', () => {
    const gaps = new Map<number, Gap>();
    settle(0, [readable(2), readable(4)], { gaps, now: 0, settleMs: SETTLE_MS });
    const later = settle(0, [readable(2), readable(4)], { gaps, now: 1_000, settleMs: SETTLE_MS });
    expect({ tailId: later.tailId, ids: idsOf(later.pets) }).toEqual({ tailId: 4, ids: [2, 4] });
  });

  it('when documents are unreadable, then they hold their place but deliver nothing, and ids that are not integers hold none', () => {
    const gaps = new Map<number, Gap>();
    const settled = settle(4, [unreadable(5), unreadable(5.5), readable(6)], { gaps, now: 0, settleMs: SETTLE_MS });
    expect({ tailId: settled.tailId, ids: idsOf(settled.pets), holdUntil: settled.holdUntil }).toEqual({
      tailId: 6,
      ids: [6],
      holdUntil: undefined,
    });
  });

  it('when a read repeats entries at or below the tail, then they are ignored', () => {
    const settled = settle(6, [readable(5), readable(6), readable(7)], {
      gaps: new Map(),
      now: 0,
      settleMs: SETTLE_MS,
    });
    expect({ tailId: settled.tailId, ids: idsOf(settled.pets) }).toEqual({ tailId: 7, ids: [7] });
  });
});
