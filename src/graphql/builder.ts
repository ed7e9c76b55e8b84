import SchemaBuilder from '@pothos/core';
import ValidationPlugin from '@pothos/plugin-validation';
import type { Context } from '../context.ts';
import { badUserInput } from './errors.ts';

/**
 * The validation plugin throws its own error by default and Yoga masks anything that is not a
 * GraphQLError, so clients would see "Unexpected error.": turn the first issue into BAD_USER_INPUT.
 * Unlike plugin-zod, it wraps only the fields that validate something, and synchronously.
 */
export const builder = new SchemaBuilder<{
  Context: Context;
  Scalars: { Int64: { Input: number; Output: number } };
  DefaultInputFieldRequiredness: false;
  DefaultFieldNullability: false;
}>({
  // Non-null unless a field says otherwise: clients should not null-check what is always there.
  defaultFieldNullability: false,
  plugins: [ValidationPlugin],
  validation: {
    validationError: (failure) => {
      const issue = failure.issues[0];
      const field = issue?.path?.map((step) => String(typeof step === 'object' ? step.key : step)).join('.') || 'input';
      return badUserInput(field, issue?.message ?? 'is invalid');
    },
  },
});
