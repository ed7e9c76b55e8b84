import type { Logger } from 'pino';
import type { Pet } from './pet.ts';
import type { PetChanges } from './pet-changes.ts';
import { type Gap, settle } from './pet-gaps.ts';
import type { PetRepository, StoredEntry } from './pet-repository.ts';

/** Documents per read: a page's worth, as the list's keyset query reads. */
export const FEED_BATCH = 100;

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

/** Index of the first pet in `ring` (id order) whose id is above `id`: a binary search. */
export function firstAbove(ring: readonly Pet[], id: number): number {
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
export function createSettledPets({
  pets,
  settleMs,
  recentSize,
}: Pick<PetTailOptions, 'pets' | 'settleMs' | 'recentSize'>) {
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

export interface PetTailOptions {
  /** The repository (reads only: highestId and readAfter for the tail, listPage for followers behind it). */
  pets: PetRepository;
  /** "Look again" notifications. */
  changes: PetChanges;
  /** The slow timer: look again this often while anyone follows, so a lost notification costs only time. */
  pollMs: number;
  /** How long pets beyond a missing id are held back before the gap is accepted. */
  settleMs: number;
  logger: Logger;
  /** How many recent pets the instance keeps for its followers; one further behind reads the database. */
  recentSize: number;
}

/** The read's result, or undefined as soon as `signal` aborts: a read under way then ends unheard. */
export function unlessAborted<T>(read: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    const aborted = () => resolve(undefined);
    signal.addEventListener('abort', aborted, { once: true });
    if (signal.aborted) aborted();
    read.then(resolve, reject).finally(() => signal.removeEventListener('abort', aborted));
  });
}

/** One "something happened" at a time: waiters of the current one wake together. */
function createPulse() {
  let resolveCurrent = () => {};
  const fresh = () => new Promise<void>((resolve) => (resolveCurrent = resolve));
  let current = fresh();
  return {
    beat(): void {
      resolveCurrent();
      current = fresh();
    },
    next: async (signal: AbortSignal): Promise<void> => void (await unlessAborted(current, signal)),
  };
}

interface LooksOptions {
  settled: SettledPets;
  logger: Logger;
  /** False once nobody follows or the feed closed: a look then reads nothing. */
  isActive: () => boolean;
  /** After each look, whatever it found; `read` says whether the database answered. */
  afterLook: (read: boolean) => void;
}

/** Looks at the database one read at a time; looks asked for while one runs become one more. */
function createLooks({ settled, logger, isActive, afterLook }: LooksOptions) {
  const flags = { reading: false, again: false, failing: false, read: false };
  let wake: NodeJS.Timeout | undefined;
  const readOn = () =>
    settled.readOn().then(
      (holdUntil) => {
        if (holdUntil !== undefined) {
          clearTimeout(wake);
          wake = setTimeout(look, Math.max(0, holdUntil - Date.now()) + 1).unref();
        }
        if (flags.failing) logger.info('the pet feed reads the database again');
        flags.failing = false;
        flags.read = true;
      },
      (error: unknown) => {
        if (!flags.failing)
          logger.warn({ err: error }, 'the pet feed cannot read new pets: it tries again at the next look');
        flags.failing = true;
        flags.read = false;
      },
    );
  function look(): void {
    if (!isActive()) return;
    if (flags.reading) {
      flags.again = true;
      return;
    }
    flags.reading = true;
    void readOn().finally(() => {
      flags.reading = false;
      afterLook(flags.read);
      if (!flags.again) return;
      flags.again = false;
      look();
    });
  }
  return { look, stop: () => clearTimeout(wake) };
}

/**
 * The one reader of new pets in this instance, running only while someone follows: it looks on each
 * notification and every `pollMs`, and forgets everything when the last follower leaves.
 */
export function createPetTail(options: PetTailOptions) {
  const settled = createSettledPets(options);
  const pulse = createPulse();
  // Followers whose own read failed wait for this: a look that read, or the slow timer, so an
  // outage does not turn every notification into one more read per follower.
  const retry = createPulse();
  let followers = 0;
  let closed = false;
  const looks = createLooks({
    settled,
    logger: options.logger,
    isActive: () => !closed && followers > 0,
    afterLook: (read) => {
      pulse.beat();
      if (read) retry.beat();
    },
  });
  // Notifications and the slow timer, while anyone follows: each asks for a look.
  let poll: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;

  function start(): void {
    unsubscribe = options.changes.onChange(looks.look);
    poll = setInterval(() => {
      retry.beat();
      looks.look();
    }, options.pollMs).unref();
    looks.look();
  }

  function stop(): void {
    unsubscribe?.();
    unsubscribe = undefined;
    clearInterval(poll);
    looks.stop();
    settled.reset();
    pulse.beat();
    retry.beat();
  }

  function join(): () => void {
    if (++followers === 1) start();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--followers === 0) stop();
    };
  }

  return {
    tailId: settled.tailId,
    startId: settled.startId,
    seenId: settled.seenId,
    covers: settled.covers,
    nextAbove: settled.nextAbove,
    /** Resolves after the next look (whatever it found), at abort, or at close. */
    next: (signal: AbortSignal): Promise<void> => pulse.next(signal),
    /** Resolves after the next look that read or the next tick of the slow timer, at abort, or at close. */
    nextRetry: (signal: AbortSignal): Promise<void> => retry.next(signal),
    isClosed: (): boolean => closed,
    /** A follower arrives; call the returned function when it leaves (more calls do nothing). */
    join,
    close(): void {
      closed = true;
      stop();
    },
  };
}

export type PetTail = ReturnType<typeof createPetTail>;
