// Autocannon stops at its deadline, but the servers may still hold work it started: requests queued
// behind FerretDB, creates waiting for an id. Left alone, that work would run inside the next run's
// window (or after a reset, putting pets back). Counting repository calls in flight lets the child
// answer "settled" only once the store is quiet.

import type { PetRepository } from '../src/pets/pet-repository.ts';

/** Quiet for this long counts as settled: a request still being parsed reaches the store by then. */
const QUIET_MS = 20;
const POLL_MS = 5;

export interface InFlight<P extends PetRepository> {
  pets: P;
  /** Resolves once no call has been in flight for QUIET_MS; rejects after `timeoutMs`. */
  settled(timeoutMs: number): Promise<void>;
}

export function trackInFlight<P extends PetRepository>(inner: P): InFlight<P> {
  let pending = 0;
  const counted =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      pending++;
      try {
        return await call(...args);
      } finally {
        pending--;
      }
    };
  const pets = {
    ...inner,
    create: counted(inner.create.bind(inner)),
    findById: counted(inner.findById.bind(inner)),
    listPage: counted(inner.listPage.bind(inner)),
    highestId: counted(inner.highestId.bind(inner)),
    readAfter: counted(inner.readAfter.bind(inner)),
  };
  return {
    pets,
    async settled(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let quietSince = pending === 0 ? Date.now() : Number.POSITIVE_INFINITY;
      while (Date.now() - quietSince < QUIET_MS) {
        if (Date.now() > deadline) throw new Error(`${pending} repository calls still in flight after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        if (pending > 0) quietSince = Number.POSITIVE_INFINITY;
        else if (quietSince === Number.POSITIVE_INFINITY) quietSince = Date.now();
      }
    },
  };
}
