import type { Pet } from './pet.ts';
import type { StoredEntry } from './pet-repository.ts';

/** Where the tail stands after a read: everything up to `tailId` is settled. */
export interface Settled {
  tailId: number;
  /** The readable pets that settled, in id order. */
  pets: Pet[];
  /** When the gap the tail waits at will be accepted; absent when nothing is held. */
  holdUntil?: number;
}

/** A run of missing ids, keyed by its first id: its last id when first seen, and when that was. */
export interface Gap {
  to: number;
  since: number;
}

export interface SettleWindow {
  /** Kept across reads, pruned as the tail passes. */
  gaps: Map<number, Gap>;
  now: number;
  settleMs: number;
}

/** When any part of the missing run [from, to] was first seen: a partly filled gap keeps its clock. */
function firstSeen(gaps: ReadonlyMap<number, Gap>, from: number, to: number, now: number): number {
  let since = now;
  for (const [start, gap] of gaps) if (start <= to && gap.to >= from) since = Math.min(since, gap.since);
  return since;
}

/**
 * Settles what a read found, in id order from tailId + 1. Past a missing id (ids are taken before the
 * insert, so N+1 may be stored before N) everything waits until the gap was seen `settleMs` ago.
 */
export function settle(
  tailId: number,
  entries: readonly StoredEntry[],
  { gaps, now, settleMs }: SettleWindow,
): Settled {
  let previous = tailId;
  for (const { id } of entries) {
    if (!Number.isInteger(id) || id <= previous) continue;
    if (id > previous + 1 && !gaps.has(previous + 1))
      gaps.set(previous + 1, { to: id - 1, since: firstSeen(gaps, previous + 1, id - 1, now) });
    previous = id;
  }
  const pets: Pet[] = [];
  let holdUntil: number | undefined;
  for (const { id, pet } of entries) {
    if (!Number.isInteger(id) || id <= tailId) continue;
    const since = gaps.get(tailId + 1)?.since;
    if (id > tailId + 1 && since !== undefined && now - since < settleMs) {
      holdUntil = since + settleMs;
      break;
    }
    tailId = id;
    if (pet) pets.push(pet);
  }
  for (const [start, gap] of gaps) if (gap.to <= tailId) gaps.delete(start);
  return holdUntil === undefined ? { tailId, pets } : { tailId, pets, holdUntil };
}
