import { describe, expect, it } from 'vitest';
import { documentedOperation, documentedSchema } from './support/openapi-contract.ts';
import { OPERATIONS, PET_STATUSES, type Pet } from './support/rest-types.ts';

/** Each field of Pet, true where the type requires it; `satisfies` holds this list and the type together. */
const PET_FIELDS = { id: true, name: true, categoryId: true, status: false } as const satisfies {
  [K in keyof Pet]-?: undefined extends Pet[K] ? false : true;
};

describe('the types the tests read REST answers with (test/support/rest-types.ts)', () => {
  it.each(Object.keys(OPERATIONS) as Array<keyof typeof OPERATIONS>)(
    'give %s every status the document gives it, each with its body schema and its required headers',
    (operationId) => {
      expect(documentedOperation(operationId)).toEqual(OPERATIONS[operationId]);
    },
  );

  it("give Pet the document's fields, requiring the ones it requires", () => {
    const pet = documentedSchema('Pet');
    expect(Object.keys(PET_FIELDS).sort()).toEqual(Object.keys(pet.properties as object).sort());
    const required = Object.entries(PET_FIELDS).flatMap(([field, isRequired]) => (isRequired ? [field] : []));
    expect(required.sort()).toEqual([...(pet.required as string[])].sort());
  });

  it("give PetStatus the document's values", () => {
    expect(PET_STATUSES).toEqual(documentedSchema('PetStatus').enum);
  });
});
