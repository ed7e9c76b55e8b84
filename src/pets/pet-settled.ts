import type { Pet } from './pet.ts';
import { type Gap, settle } from './pet-gaps.ts';
import type { PetRepository, StoredEntry } from './pet-repository.ts';

/** Documents per read: a page's worth, as the list's keyset query reads. */
export const FEED_BATCH = 100;

export interface SettledPetsOptions {
  pets: PetRepository;
  settleMs: number;
  recentSize: number;
}

interface TailState {
  /** Where the tail started: the newest stored pet when the first follower arrived. */
  startId: number;
  /** The highest pet id any read has found, settled or held: where a follower without a cursor starts. */
  seenId: number;
  tailId: number;
  /** The id just before the ring's first pet: the ring holds every settled pet above it. */
  floor: number;
  ring: Pet[];
  gaps: Map<number, Gap>;
}

/** The highest integer id among `entries`, 0 when none. */
function highestPetId(entries: readonly StoredEntry[]): number {
  let highest = 0;
  for (const { id } of entries) if (Number.isInteger(id) && id > highest) highest = id;
  return highest;
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
        const highest = await pets.highestId();
        if (at !== epoch) return undefined;
        // Ids are taken before the insert, so one just below the newest may still be on its way: the
        // last batch below it settles like any other ids, its gaps held for the window.
        const tailId = Math.max(0, highest - FEED_BATCH);
        state = { startId: highest, seenId: highest, tailId, floor: tailId, ring: [], gaps: new Map() };
      }
      const current = state;
      let readFrom = current.tailId;
      for (;;) {
        const entries = await pets.readAfter(readFrom, FEED_BATCH);
        if (at !== epoch) return undefined;
        const found = settle(current.tailId, entries, { gaps: current.gaps, now: Date.now(), settleMs });
        const advanced = found.tailId > current.tailId;
        current.tailId = found.tailId;
        current.seenId = Math.max(current.seenId, highestPetId(entries));
        remember(current, found.pets, recentSize);
        if (found.holdUntil !== undefined || entries.length < FEED_BATCH) return found.holdUntil;
        // A full batch that settled nothing holds only ids that are not integers: read on past them.
        readFrom = advanced ? current.tailId : (entries.at(-1) as StoredEntry).id;
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
    /** The highest pet id the tail has found so far (held ones included); undefined until it started. */
    seenId: (): number | undefined => state?.seenId,
    /** True when the ring holds every settled pet above `cursor`. */
    covers: (cursor: number): boolean => state !== undefined && cursor >= state.floor,
    /** The settled pet right after `cursor` in the ring, if any. */
    nextAbove: (cursor: number): Pet | undefined => state?.ring[firstAbove(state.ring, cursor)],
  };
}

export type SettledPets = ReturnType<typeof createSettledPets>;
