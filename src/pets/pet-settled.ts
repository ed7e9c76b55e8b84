import type { Pet } from './pet.ts';
import type { StoredEntry } from './pet-reads.ts';
import type { PetRepository } from './pet-repository.ts';

/** Documents per read: a page's worth, as the list's keyset query reads. */
export const FEED_BATCH = 100;

/** Where the tail stands after a read: everything up to `tailId` is settled. */
export interface Settled {
  tailId: number;
  /** The readable pets that settled, in id order. */
  pets: Pet[];
  /** When the gap the tail waits at will be accepted; absent when nothing is held. */
  holdUntil?: number;
}

/**
 * Settles what a read found, in id order from tailId + 1. The next id settles at once; past a missing
 * id (ids are taken before the insert, so N+1 may be stored before N) everything waits until the gap
 * has been seen for `settleMs`, then the gap is accepted. `gaps` remembers when each missing id was
 * first seen. Ids that are not integers (unreadable documents) hold no place.
 */
export interface SettleWindow {
  /** When each missing id was first seen; kept across reads, pruned as the tail passes. */
  gaps: Map<number, number>;
  now: number;
  settleMs: number;
}

export function settle(
  tailId: number,
  entries: readonly StoredEntry[],
  { gaps, now, settleMs }: SettleWindow,
): Settled {
  let previous = tailId;
  for (const { id } of entries) {
    if (!Number.isInteger(id) || id <= previous) continue;
    if (id > previous + 1 && !gaps.has(previous + 1)) gaps.set(previous + 1, now);
    previous = id;
  }
  const pets: Pet[] = [];
  let holdUntil: number | undefined;
  for (const { id, pet } of entries) {
    if (!Number.isInteger(id) || id <= tailId) continue;
    const since = gaps.get(tailId + 1);
    if (id > tailId + 1 && since !== undefined && now - since < settleMs) {
      holdUntil = since + settleMs;
      break;
    }
    tailId = id;
    if (pet) pets.push(pet);
  }
  for (const missing of gaps.keys()) if (missing <= tailId) gaps.delete(missing);
  return holdUntil === undefined ? { tailId, pets } : { tailId, pets, holdUntil };
}

export interface SettledPetsOptions {
  pets: PetRepository;
  settleMs: number;
  recentSize: number;
}

interface TailState {
  /** Where the tail started: the newest stored pet when the first follower arrived. */
  startId: number;
  tailId: number;
  /** The id just before the ring's first pet: the ring holds every settled pet above it. */
  floor: number;
  ring: Pet[];
  gaps: Map<number, number>;
}

/** Index of the first pet in `ring` (id order) whose id is above `id`. */
function firstAbove(ring: readonly Pet[], id: number): number {
  let low = 0;
  let high = ring.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((ring[middle] as Pet).id <= id) low = middle + 1;
    else high = middle;
  }
  return low;
}

function remember(state: TailState, pets: readonly Pet[], recentSize: number): void {
  // Shared by every follower: frozen, so no consumer can change what the others get.
  for (const pet of pets) state.ring.push(Object.freeze(pet));
  const excess = state.ring.length - recentSize;
  if (excess > 0) state.floor = (state.ring.splice(0, excess).at(-1) as Pet).id;
}

/**
 * What is settled and the ring of recent pets, with the reads that move them on. reset() forgets
 * everything; a read that was under way when it ran then changes nothing.
 */
export function createSettledPets({ pets, settleMs, recentSize }: SettledPetsOptions) {
  let state: TailState | undefined;
  let epoch = 0;
  return {
    /** Reads on from the tail until the end or a gap; resolves with when to look again for a held gap. */
    async readOn(): Promise<number | undefined> {
      const at = epoch;
      if (!state) {
        const tailId = await pets.highestId();
        if (at !== epoch) return undefined;
        state = { startId: tailId, tailId, floor: tailId, ring: [], gaps: new Map() };
      }
      const current = state;
      for (;;) {
        const entries = await pets.readAfter(current.tailId, FEED_BATCH);
        if (at !== epoch) return undefined;
        const found = settle(current.tailId, entries, { gaps: current.gaps, now: Date.now(), settleMs });
        current.tailId = found.tailId;
        remember(current, found.pets, recentSize);
        if (found.holdUntil !== undefined || entries.length < FEED_BATCH) return found.holdUntil;
      }
    },
    reset(): void {
      epoch++;
      state = undefined;
    },
    /** Everything up to this id is settled; undefined until the first read. */
    tailId: (): number | undefined => state?.tailId,
    /** The newest stored id when the tail started; undefined until then. */
    startId: (): number | undefined => state?.startId,
    /** True when the ring holds every settled pet above `cursor`. */
    covers: (cursor: number): boolean => state !== undefined && cursor >= state.floor,
    /** The settled pet right after `cursor` in the ring, if any. */
    nextAbove: (cursor: number): Pet | undefined => state?.ring[firstAbove(state.ring, cursor)],
  };
}

export type SettledPets = ReturnType<typeof createSettledPets>;
