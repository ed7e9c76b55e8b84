import { type NewPet, PET_STATUSES, type Pet, type PetStatus } from './pet.ts';
import { isPetId, isPetName } from './pet-rules.ts';

export const PETS_COLLECTION = 'pets';

/** Stored shape: the pet's id is the document's `_id`, so lookups by id hit the primary key. */
export type PetDocument = {
  _id: number;
  name: string;
  categoryId: number;
  status?: PetStatus;
};

/** What a read may find: anyone with access to the database can store anything under `pets`. */
export type StoredDocument = { _id: unknown } & Record<string, unknown>;

function isStatus(value: unknown): value is PetStatus {
  return (PET_STATUSES as readonly unknown[]).includes(value);
}

/** Why a stored document is not a pet by the rules its input had to meet, or null when it is one. */
function problemWith(doc: StoredDocument): string | null {
  if (!isPetId(doc._id)) return '_id is not a positive safe integer';
  if (!isPetName(doc.name)) return 'name is missing or not 1 to 100 characters of valid text';
  if (!isPetId(doc.categoryId)) return 'categoryId is not a positive safe integer';
  if (doc.status !== undefined && doc.status !== null && !isStatus(doc.status))
    return `status is not one of ${PET_STATUSES.join(', ')}`;
  return null;
}

export function documentOf(id: number, pet: NewPet): PetDocument {
  const doc: PetDocument = { _id: id, name: pet.name, categoryId: pet.categoryId };
  if (pet.status !== undefined) doc.status = pet.status;
  return doc;
}

/** The pet of a stored document; an absent or null status stays absent. */
export function toPet(doc: PetDocument): Pet {
  const pet: Pet = { id: doc._id, name: doc.name, categoryId: doc.categoryId };
  if (doc.status !== undefined && doc.status !== null) pet.status = doc.status;
  return pet;
}

/** A stored document as a pet, or what keeps it from being one. */
export function readPet(doc: StoredDocument): { pet: Pet; problem?: never } | { pet?: never; problem: string } {
  const problem = problemWith(doc);
  return problem === null ? { pet: toPet(doc as PetDocument) } : { problem };
}

/** A stored `_id` of any type as log text (and as the key that reports each document once). */
export function describeId(id: unknown): string {
  const plain = typeof id === 'object' && id !== null && id.constructor === Object;
  return typeof id === 'string' || Array.isArray(id) || plain ? JSON.stringify(id) : String(id);
}
