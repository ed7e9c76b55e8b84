import { GraphQLError } from 'graphql';
import { DomainError } from '../errors.ts';
import { fromDomainError, unexpectedError } from './errors.ts';

/** The error a resolver threw, under the GraphQLError graphql-js wrapped it in. */
export function rootCause(error: unknown): unknown {
  let current = error;
  while (current instanceof Error && 'originalError' in current && current.originalError)
    current = current.originalError;
  return current;
}

/** A GraphQLError all the way down: ours (zod rules, variables) or graphql-js's own, never a wrapped throw. */
export function isOwnGraphQLError(error: unknown): error is GraphQLError {
  if (!(error instanceof GraphQLError)) return false;
  return error.originalError == null || isOwnGraphQLError(error.originalError);
}

/**
 * Our own GraphQLErrors pass as they are; domain errors get their code and status; everything else
 * is a bug, masked as "Unexpected error.". The error log has logged each one already (error-log.ts).
 */
export const maskError = (error: unknown): GraphQLError => {
  if (!(error instanceof Error)) return unexpectedError();
  if (isOwnGraphQLError(error)) return error;
  const cause = rootCause(error);
  if (cause instanceof DomainError) return fromDomainError(cause);
  return unexpectedError();
};
