import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { badUserInput } from './errors.ts';

/**
 * graphql-js reports bad variables (wrong type, unknown field, null for a required field) before any
 * resolver runs, with the path only inside its message and no `extensions.code`. These patterns
 * follow graphql-js 16's coerceInputValue/getVariableValues messages; anything else passes through.
 */
const AT_PATH = /^Variable "\$\w+" got invalid value .*? at "([^"]+)"; (?:Expected type "\w+"\. )?(.*)$/s;
const AT_VARIABLE = /^Variable "\$(\w+)" got invalid value .*?; (?:Expected type "\w+"\. )?(.*)$/s;
const MISSING_VARIABLE = /^Variable "\$(\w+)" of (?:required|non-null) type "[^"]+" (?:was not provided|must not be null)\.$/;
const NAMED_FIELD = /^Field "(\w+)" (?:of required type "[^"]+" was not provided|is not defined by type "\w+")/;

export function describeVariableError(message: string): { field: string; reason: string } | null {
  const missing = MISSING_VARIABLE.exec(message);
  if (missing?.[1]) return { field: missing[1], reason: 'is required' };
  const match = AT_PATH.exec(message) ?? AT_VARIABLE.exec(message);
  if (!match?.[1] || match[2] === undefined) return null;
  const [, path, reason] = match;
  const named = NAMED_FIELD.exec(reason);
  if (named?.[1]) {
    const unknown = reason.includes('is not defined');
    return { field: `${path}.${named[1]}`, reason: unknown ? 'is not a known field' : 'is required' };
  }
  if (/^Expected non-nullable type .* not to be null\.?$/.test(reason)) return { field: path, reason: 'must not be null' };
  return { field: path, reason: reason.replace(/\.$/, '') };
}

function withCode(error: GraphQLError): GraphQLError {
  if (error.extensions?.code !== undefined) return error;
  const described = describeVariableError(error.message);
  return described ? badUserInput(described.field, described.reason) : error;
}

/** Gives variable errors the same BAD_USER_INPUT shape (code, field, reason) as our own. */
export function useVariableErrorCodes(): Plugin {
  return {
    onExecute: () => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors?.length || result.data) return;
        setResult({ ...result, errors: result.errors.map((error) => (error instanceof GraphQLError ? withCode(error) : error)) });
      },
    }),
  };
}
