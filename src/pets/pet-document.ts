import { MAX_INT64_EXACT, PET_NAME_MAX_LENGTH, PET_STATUSES, type Pet, type PetStatus } from './pet.ts';

/** Stored shape: the pet's id is the document's `_id`, so lookups by id hit the primary key. */
export type PetDocument = {
  _id: number;
  name: string;
  categoryId: number;
  status?: PetStatus;
};

/** What a read may find: anyone with access to the database can store anything under `pets`. */
export type StoredDocument = { _id: unknown } & Record<string, unknown>;

function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= MAX_INT64_EXACT;
}

/** Names as the contract spells them: 1 to 100 code points, not all whitespace. */
function isName(value: unknown): value is string {
  if (typeof value !== 'string' || value.trim().length === 0) return false;
  // Cheap first: no more UTF-16 units than the limit means no more code points either.
  return value.length <= PET_NAME_MAX_LENGTH || [...value].length <= PET_NAME_MAX_LENGTH;
}

function isStatus(value: unknown): value is PetStatus {
  return (PET_STATUSES as readonly unknown[]).includes(value);
}

/** Why a stored document is not a pet this service can return, or null when it is one. */
function problemWith(doc: StoredDocument): string | null {
  if (!isId(doc._id)) return '_id is not a positive safe integer';
  if (!isName(doc.name)) return 'name is missing or not 1 to 100 characters of text';
  if (!isId(doc.categoryId)) return 'categoryId is not a positive safe integer';
  if (doc.status !== undefined && doc.status !== null && !isStatus(doc.status))
    return `status is not one of ${PET_STATUSES.join(', ')}`;
  return null;
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
  if (typeof id === 'string') return JSON.stringify(id);
  if (Array.isArray(id) || (typeof id === 'object' && id !== null && id.constructor === Object))
    return JSON.stringify(id);
  return String(id);
}
