import type { NewPet, Pet } from '../src/pets/pet.ts';
import type { PetRepository } from '../src/pets/pet-repository.ts';

/**
 * A PetRepository held in memory, for the benchmark's second pass only: with no database in the way,
 * the gap between the baseline and the app is the cost of the HTTP, GraphQL and REST layers alone.
 * Same contract as the Mongo repository (ascending ids, keyset paging, fresh objects per call).
 */
export function createMemoryPetRepository(initial: readonly Pet[] = []): PetRepository {
  const byId = new Map<number, Pet>();
  let ordered: Pet[] = [];
  let lastId = 0;
  const add = (pet: Pet) => {
    byId.set(pet.id, pet);
    lastId = Math.max(lastId, pet.id);
  };
  for (const pet of initial) add({ ...pet });
  ordered = [...byId.values()].sort((a, b) => a.id - b.id);

  return {
    async create(newPet: NewPet) {
      const pet: Pet = { ...newPet, id: lastId + 1 };
      add(pet);
      ordered.push(pet);
      return { ...pet };
    },
    async findById(id) {
      const pet = byId.get(id);
      return pet ? { ...pet } : null;
    },
    async listPage({ limit, status, afterId }) {
      const found: Pet[] = [];
      for (const pet of ordered) {
        if (afterId !== undefined && pet.id <= afterId) continue;
        if (status !== undefined && pet.status !== status) continue;
        found.push({ ...pet });
        if (found.length > limit) break;
      }
      return { pets: found.slice(0, limit), hasNextPage: found.length > limit };
    },
  };
}
