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
  /** After each look, whatever it found. */
  afterLook: () => void;
}

/** Looks at the database one read at a time; looks asked for while one runs become one more. */
function createLooks({ settled, logger, isActive, afterLook }: LooksOptions) {
  const flags = { reading: false, again: false, failing: false };
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
      },
      (error: unknown) => {
        if (!flags.failing)
          logger.warn({ err: error }, 'the pet feed cannot read new pets: it tries again at the next look');
        flags.failing = true;
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
      afterLook();
      if (!flags.again) return;
      flags.again = false;
      look();
    });
  }
  return { look, stop: () => clearTimeout(wake) };
}

/**
 * The one reader of new pets in this instance, shared by its followers. It runs only while someone
 * follows: it starts at the highest stored id, looks again on each notification and every `pollMs`,
 * and forgets everything when the last follower leaves, so a later start does not read through
 * what was stored meanwhile.
 */
export function createPetTail(options: PetTailOptions) {
  const settled = createSettledPets(options);
  const pulse = createPulse();
  let followers = 0;
  let closed = false;
  const looks = createLooks({
    settled,
    logger: options.logger,
    isActive: () => !closed && followers > 0,
    afterLook: pulse.beat,
  });
  let poll: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;

  function stop(): void {
    unsubscribe?.();
    unsubscribe = undefined;
    clearInterval(poll);
    looks.stop();
    settled.reset();
    pulse.beat();
  }

  function join(): () => void {
    if (++followers === 1) {
      unsubscribe = options.changes.onChange(looks.look);
      poll = setInterval(looks.look, options.pollMs).unref();
      looks.look();
    }
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
    covers: settled.covers,
    nextAbove: settled.nextAbove,
    /** Resolves after the next look (whatever it found), at abort, or at close. */
    next: (signal: AbortSignal): Promise<void> => pulse.next(signal),
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
