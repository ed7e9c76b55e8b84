import { PetIdTakenError } from '../src/errors.ts';
import type { NewPet, Pet } from '../src/pets/pet.ts';
import type { PetRepository } from '../src/pets/pet-repository.ts';
import { firstAbove } from '../src/pets/pet-tail.ts';

export interface MemoryPetRepository extends PetRepository {
  /** Back to the initial pets: a create run must not leave the next run a bigger store. */
  reset(): void;
}

/**
 * A PetRepository held in memory: with no database in the way, the gap between the floor and the
 * other targets is the cost of the HTTP, GraphQL and REST layers alone. Same contract as the Mongo
 * repository (ascending ids, keyset paging, fresh objects per call).
 */
export function createMemoryPetRepository(initial: readonly Pet[] = []): MemoryPetRepository {
  const byId = new Map<number, Pet>();
  let ordered: Pet[] = [];
  let lastId = 0;

  const reset = () => {
    byId.clear();
    for (const pet of initial) byId.set(pet.id, { ...pet });
    ordered = [...byId.values()].sort((a, b) => a.id - b.id);
    lastId = ordered.at(-1)?.id ?? 0;
  };
  reset();

  return {
    reset,
    async allocateId() {
      return ++lastId;
    },
    async create(newPet: NewPet, options) {
      const pet: Pet = { ...newPet, id: options?.id ?? ++lastId };
      if (byId.has(pet.id)) throw new PetIdTakenError(pet.id);
      byId.set(pet.id, pet);
      lastId = Math.max(lastId, pet.id);
      // An id allocated earlier may be stored after later ones: keep the order reads rely on.
      ordered.splice(firstAbove(ordered, pet.id), 0, pet);
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
    async highestId() {
      return ordered.at(-1)?.id ?? 0;
    },
    async readAfter(afterId, limit) {
      const start = firstAbove(ordered, afterId);
      return ordered.slice(start, start + limit).map((pet) => ({ id: pet.id, pet: { ...pet } }));
    },
  };
}
