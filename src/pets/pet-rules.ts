import { z } from 'zod';
import { LIST_LIMIT, MAX_INT64_EXACT, PET_NAME_MAX_LENGTH } from './pet.ts';

/** The rules a pet must meet, as zod schemas the API layers attach to their inputs. */

export const petNameRule = z
  .string()
  .refine((name) => name.isWellFormed(), 'must be valid Unicode text')
  .refine((name) => name.trim().length > 0, 'must not be blank')
  .refine((name) => [...name].length <= PET_NAME_MAX_LENGTH, `must be at most ${PET_NAME_MAX_LENGTH} characters long`);

export const categoryIdRule = z
  .number()
  .int('must be an integer')
  .min(1, 'must be a positive integer')
  .max(MAX_INT64_EXACT, `must be at most ${MAX_INT64_EXACT}`);

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
