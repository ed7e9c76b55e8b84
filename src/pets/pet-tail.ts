import type { Logger } from 'pino';
import type { PetChanges } from './pet-changes.ts';
import type { PetRepository } from './pet-repository.ts';
import { createSettledPets, type SettledPets } from './pet-settled.ts';

export interface PetTailOptions {
  pets: PetRepository;
  changes: PetChanges;
  pollMs: number;
  settleMs: number;
  logger: Logger;
  recentSize: number;
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
    next(signal: AbortSignal): Promise<void> {
      const beat = current;
      return new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        signal.addEventListener('abort', done, { once: true });
        void beat.then(done);
      });
    },
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

interface WatchOptions {
  changes: PetChanges;
  pollMs: number;
  look: () => void;
  /** Each tick of the slow timer, before its look. */
  tick: () => void;
}

/** Notifications and the slow timer, while anyone follows: each asks for a look. */
function createWatch({ changes, pollMs, look, tick }: WatchOptions) {
  let poll: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  return {
    start(): void {
      unsubscribe = changes.onChange(look);
      poll = setInterval(() => {
        tick();
        look();
      }, pollMs).unref();
      look();
    },
    stop(): void {
      unsubscribe?.();
      unsubscribe = undefined;
      clearInterval(poll);
    },
  };
}

/**
 * The one reader of new pets in this instance, shared by its followers. It runs only while someone
 * follows: it starts a batch below the highest stored id (pet-settled.ts), looks again on each
 * notification and every `pollMs`, and forgets everything when the last follower leaves, so a later
 * start does not read through what was stored meanwhile.
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
  const watch = createWatch({ ...options, look: looks.look, tick: retry.beat });

  function stop(): void {
    watch.stop();
    looks.stop();
    settled.reset();
    pulse.beat();
    retry.beat();
  }

  function join(): () => void {
    if (++followers === 1) watch.start();
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
