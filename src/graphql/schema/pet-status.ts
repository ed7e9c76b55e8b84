import { PET_STATUSES, type PetStatus } from '../../pets/pet.ts';

/** The GraphQL enum's name of a status: the domain's value in capitals (`available` -> `AVAILABLE`). */
export type PetStatusName = Uppercase<PetStatus>;

export function petStatusName(status: PetStatus): PetStatusName {
  return status.toUpperCase() as PetStatusName;
}

/** The enum's values, built from the domain's one list of statuses. */
export const PET_STATUS_VALUES = Object.fromEntries(
  PET_STATUSES.map((status) => [petStatusName(status), { value: status }]),
) as { [Name in PetStatusName]: { value: Lowercase<Name> } };
