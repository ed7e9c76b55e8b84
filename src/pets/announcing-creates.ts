import type { PetChanges } from './pet-changes.ts';
import type { PetRepository } from './pet-repository.ts';

/**
 * The repository with an announcement after each stored pet. Every insert (plain, keyed, a keyed
 * retry stored late) goes through create, so wrapping it here misses none; a failed create and a
 * replay store nothing and announce nothing.
 */
export function announcingCreates(pets: PetRepository, changes: PetChanges): PetRepository {
  return {
    create: async (newPet, options) => {
      const pet = await pets.create(newPet, options);
      changes.announce();
      return pet;
    },
    allocateId: (options) => pets.allocateId(options),
    findById: (id) => pets.findById(id),
    listPage: (query) => pets.listPage(query),
    highestId: () => pets.highestId(),
    readAfter: (afterId, limit) => pets.readAfter(afterId, limit),
  };
}
