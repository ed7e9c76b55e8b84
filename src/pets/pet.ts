/** The pet domain: plain data and the limits of the contract; nothing here knows GraphQL or HTTP. */

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  /** Absent when the pet was created without one: the contract sets no default. */
  status?: PetStatus;
}

export type NewPet = Omit<Pet, 'id'>;

/** Names are counted in Unicode code points, as JSON Schema's maxLength counts them. */
export const PET_NAME_MAX_LENGTH = 100;

/** Ids and category ids are int64 on the wire; JSON numbers are exact only up to 2^53-1. */
export const MAX_INT64_EXACT = Number.MAX_SAFE_INTEGER;

export const LIST_LIMIT = { min: 1, max: 100, default: 20 } as const;

export interface PetPageQuery {
  limit: number;
  status?: PetStatus;
  /** Keyset: return only pets whose id is greater than this one. */
  afterId?: number;
}

export interface PetPage {
  pets: Pet[];
  hasNextPage: boolean;
}
