import type { PetRepository } from './pet-repository.ts';

/**
 * "Pets changed: look again." A notification carries no data: the database is the source of truth,
 * so a lost or doubled notification costs a read, never an event.
 */
export interface PetChanges {
  /** Tells this instance at once and, where shared (Redis), every other instance; never throws or waits. */
  announce(): void;
  /** Calls `listener` on every announcement, local or from another instance; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  close(): Promise<void>;
}

/** The listeners of one instance; a listener that throws does not keep the others from hearing. */
export function createChangeListeners(onListenerError: (error: unknown) => void = () => {}) {
  const listeners = new Set<() => void>();
  return {
    add(listener: () => void): () => void {
      // A wrapper per subscription: the same function subscribed twice is two subscriptions.
      const entry = () => listener();
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
    tell(): void {
      for (const listener of [...listeners]) {
        try {
          listener();
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    clear: () => listeners.clear(),
  };
}

/** Changes within one instance: enough without REDIS_URL, where one instance is the fleet. */
export function createLocalPetChanges(): PetChanges {
  const listeners = createChangeListeners();
  return {
    announce: listeners.tell,
    onChange: listeners.add,
    async close() {
      listeners.clear();
    },
  };
}

/** The repository announcing each stored pet: every insert goes through create, so none is missed. */
export function announcingCreates(pets: PetRepository, changes: PetChanges): PetRepository {
  return {
    ...pets,
    create: async (newPet, options) => {
      const pet = await pets.create(newPet, options);
      changes.announce();
      return pet;
    },
  };
}
