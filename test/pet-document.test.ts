import { describe, expect, it } from 'vitest';
import { readPet, type StoredDocument } from '../src/pets/pet-document.ts';
import { categoryIdRule, petNameRule } from '../src/pets/pet-rules.ts';

const stored = (fields: Record<string, unknown>): StoredDocument => ({ _id: 7, name: 'Rex', categoryId: 1, ...fields });

describe('a stored pet is read with the rules its input had to meet', () => {
  it('treats a name with a lone surrogate as corrupt, as the input rule refuses it', () => {
    const lone = 'Lone \uD800 surrogate';
    expect(petNameRule.safeParse(lone).success).toBe(false);
    expect(readPet(stored({ name: lone }))).toEqual({ problem: expect.stringMatching(/name/) });
  });

  it.each([
    ['a plain name', 'Rex'],
    ['a blank name', '  \t '],
    ['an empty name', ''],
    ['100 code points of astral text', '🐈'.repeat(100)],
    ['101 code points', 'x'.repeat(101)],
    ['a lone low surrogate', '\uDC00'],
    ['a surrogate pair', 'cat 🐈'],
  ])('agrees with the input rule on %s', (_case, name) => {
    expect(readPet(stored({ name })).pet !== undefined).toBe(petNameRule.safeParse(name).success);
  });

  it.each([1, 0, -5, 2.5, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1])(
    'agrees with the input rule on category id %d',
    (categoryId) => {
      expect(readPet(stored({ categoryId })).pet !== undefined).toBe(categoryIdRule.safeParse(categoryId).success);
    },
  );

  it('reads a readable document as the pet, without a status it does not have', () => {
    expect(readPet(stored({ status: null }))).toEqual({ pet: { id: 7, name: 'Rex', categoryId: 1 } });
    expect(readPet(stored({ status: 'sold' }))).toEqual({ pet: { id: 7, name: 'Rex', categoryId: 1, status: 'sold' } });
  });
});
