import { z } from 'zod';
import { LIST_LIMIT, MAX_INT64_EXACT, PET_NAME_MAX_LENGTH } from './pet.ts';

/**
 * The rules a pet must meet, as predicates: the zod schemas below check inputs with them, the
 * repository every stored pet. Control and format characters are refused in new names only.
 */
const isWellFormed = (text: string) => text.isWellFormed();
const isNotBlank = (text: string) => text.trim().length > 0;
/**
 * Control (Cc), format (Cf: bidi overrides, zero-width joiners, emoji's included) and line or paragraph
 * separators (Zl, Zp): invisible, or able to rewrite what a terminal shows. A name must look like what
 * it is, and schema/openapi.yaml's PetName pattern says exactly the same.
 */
const CONTROL_FORMAT_OR_SEPARATOR = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const hasNoControlOrFormat = (text: string) => !CONTROL_FORMAT_OR_SEPARATOR.test(text);
// No more UTF-16 units than the limit means no more code points either: the count is rarely needed.
const fitsNameLength = (name: string) => name.length <= PET_NAME_MAX_LENGTH || [...name].length <= PET_NAME_MAX_LENGTH;
const isPositive = (id: number) => id >= 1;
const isExactInJson = (id: number) => id <= MAX_INT64_EXACT;

export const isPetName = (value: unknown): value is string =>
  typeof value === 'string' && isWellFormed(value) && isNotBlank(value) && fitsNameLength(value);

/** Pet ids and category ids alike. */
export const isPetId = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && isPositive(value) && isExactInJson(value);

export const petNameRule = z
  .string()
  .refine(isWellFormed, 'must be valid Unicode text')
  .refine(
    hasNoControlOrFormat,
    'must not contain control or format characters or line separators (Unicode Cc, Cf, Zl, Zp)',
  )
  .refine(isNotBlank, 'must not be blank')
  .refine(fitsNameLength, `must be at most ${PET_NAME_MAX_LENGTH} characters long`);

export const categoryIdRule = z
  .number()
  .refine(Number.isInteger, 'must be an integer')
  .refine(isPositive, 'must be a positive integer')
  .refine(isExactInJson, `must be at most ${MAX_INT64_EXACT}`);

/** A status is omitted to leave it unset: an explicit null would look like a value was sent. */
export const NULL_STATUS_REASON = 'must not be null; omit it to leave the status unset';

export const listLimitRule = z
  .number()
  .int()
  .min(LIST_LIMIT.min, `must be between ${LIST_LIMIT.min} and ${LIST_LIMIT.max}`)
  .max(LIST_LIMIT.max, `must be between ${LIST_LIMIT.min} and ${LIST_LIMIT.max}`);

/** Pet ids travel as decimal strings (GraphQL ID); only positive exact int64 values can exist. */
export const petIdRule = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/, 'must be a positive integer')
  .refine((id) => Number(id) <= MAX_INT64_EXACT, `must be at most ${MAX_INT64_EXACT}`);
