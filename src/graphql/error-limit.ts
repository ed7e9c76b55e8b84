import { createGraphQLError } from '@graphql-tools/utils';
import type { GraphQLError } from 'graphql';

/** Errors one GraphQL answer carries at most, before one "too many errors" entry (graphql-js's validation default is 100). */
export const MAX_ERRORS = 50;

/** The code of the entry that stands for the errors left out. */
export const TOO_MANY_ERRORS = 'TOO_MANY_ERRORS';

/** The entry that stands for the errors left out; the status stays the one the others set. */
export function tooManyErrors(): GraphQLError {
  return createGraphQLError(`Too many errors: only the first ${MAX_ERRORS} are reported`, {
    extensions: { code: TOO_MANY_ERRORS },
  });
}

/** At most MAX_ERRORS errors, then tooManyErrors(): an answer never grows with what a client sent. */
export function capErrors<R extends { errors?: readonly GraphQLError[] }>(result: R): R {
  const { errors } = result;
  if (!errors || errors.length <= MAX_ERRORS) return result;
  return { ...result, errors: [...errors.slice(0, MAX_ERRORS), tooManyErrors()] };
}
