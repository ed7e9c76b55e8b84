// A pet repository standing for a bug in our own code, to see what the client and the log get of it.
import type { PetRepository } from '../../src/pets/pet-repository.ts';

/** A pet repository whose every method rejects with `new TypeError(message)`, as a real bug would. */
export function buggyPets(message: string): PetRepository {
  const bug = async (): Promise<never> => {
    throw new TypeError(message);
  };
  return { create: bug, allocateId: bug, findById: bug, listPage: bug, highestId: bug, readAfter: bug };
}
