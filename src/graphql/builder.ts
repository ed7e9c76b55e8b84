import SchemaBuilder from '@pothos/core';
import ZodPlugin from '@pothos/plugin-zod';
import type { Context } from '../context.ts';
import { badUserInput } from './errors.ts';

/**
 * The zod plugin throws zod's own error by default and Yoga masks anything that is not a
 * GraphQLError, so clients would see "Unexpected error.": turn the first issue into BAD_USER_INPUT.
 */
export const builder = new SchemaBuilder<{
  Context: Context;
  Scalars: { Int64: { Input: number; Output: number } };
  DefaultInputFieldRequiredness: false;
  DefaultFieldNullability: false;
}>({
  // Non-null unless a field says otherwise: clients should not null-check what is always there.
  defaultFieldNullability: false,
  plugins: [ZodPlugin],
  zod: {
    validationError: (zodError) => {
      const issue = zodError.issues[0];
      const field = issue?.path.map(String).join('.') || 'input';
      return badUserInput(field, issue?.message ?? 'is invalid');
    },
  },
});
