// Seeding and resetting a Mongo-compatible store through the driver, below the repository: the
// repository's create allocates ids one at a time, far too slow for 10,000 pets on FerretDB.
// The shapes mirror src/pets/pet-repository.ts and pet-ids.ts (pets keyed by numeric _id, a `petId` counter).

import type { Db } from 'mongodb';
import { PET_STATUSES, type Pet } from '../src/pets/pet.ts';

interface PetDocument {
  _id: number;
  name: string;
  categoryId: number;
  status: Pet['status'];
}

/** FerretDB-on-SQLite takes one insertMany of a few thousand documents comfortably. */
const BATCH = 2_000;

/** The pet numbered `id`: deterministic, so every store holds the same pets. */
export function seedPet(id: number): Pet {
  return { id, name: `Pet ${id}`, categoryId: (id % 7) + 1, status: PET_STATUSES[id % PET_STATUSES.length] };
}

/** Inserts pets from+1..to, then moves the counter to `to` so creates continue after them. */
export async function seedPets(db: Db, from: number, to: number): Promise<void> {
  const pets = db.collection<PetDocument>('pets');
  for (let start = from + 1; start <= to; start += BATCH) {
    const docs: PetDocument[] = [];
    for (let id = start; id <= Math.min(to, start + BATCH - 1); id++) {
      const { name, categoryId, status } = seedPet(id);
      docs.push({ _id: id, name, categoryId, status });
    }
    await pets.insertMany(docs, { ordered: false });
  }
  await setCounter(db, to);
}

/** Drops every pet above `keep` (a create run's) and winds the counter back to it. */
export async function resetPets(db: Db, keep: number): Promise<void> {
  await db.collection<PetDocument>('pets').deleteMany({ _id: { $gt: keep } });
  await setCounter(db, keep);
}

async function setCounter(db: Db, seq: number): Promise<void> {
  await db
    .collection<{ _id: string; seq: number }>('counters')
    .updateOne({ _id: 'petId' }, { $set: { seq } }, { upsert: true });
}
