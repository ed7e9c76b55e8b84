import {
  coerceInputValue,
  getOperationAST,
  isInputType,
  isNonNullType,
  typeFromAST,
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { badUserInput } from './errors.ts';

export interface VariableProblem {
  field: string;
  reason: string;
}

/** Turns one coercion message of graphql-js 16 into a reason; the path comes structured from coercion. */
function describe(path: string, message: string): VariableProblem {
  const required = /^Field "(\w+)" of required type "[^"]+" was not provided\.$/.exec(message);
  if (required?.[1]) return { field: `${path}.${required[1]}`, reason: 'is required' };
  const unknown = /^Field "(.+)" is not defined by type "\w+"\./s.exec(message);
  if (unknown?.[1]) return { field: `${path}.${unknown[1]}`, reason: 'is not a known field' };
  if (/^Expected non-nullable type "[^"]+" not to be null\.$/.test(message)) return { field: path, reason: 'must not be null' };
  const scalar = /^Expected type "\w+"\. (.*)$/s.exec(message);
  return { field: path, reason: (scalar?.[1] ?? message).replace(/\.$/, '') };
}

/**
 * Re-coerces the variables of an operation that failed before execution, to learn which argument
 * path broke which rule. graphql-js reports that path only inside its message, where a client's own
 * object keys would be printed unescaped; coerceInputValue hands it over as data.
 */
export function findVariableProblems(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): VariableProblem[] {
  const problems: VariableProblem[] = [];
  for (const definition of getOperationAST(document, operationName)?.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type);
    if (!type || !isInputType(type)) continue;
    const value = variables?.[name];
    if (value === undefined) {
      if (isNonNullType(type) && !definition.defaultValue) problems.push({ field: name, reason: 'is required' });
      continue;
    }
    coerceInputValue(value, type, (path, _invalid, error) => {
      problems.push(describe([name, ...path].join('.'), error.message));
    });
  }
  return problems;
}

function isVariableError(error: GraphQLError): boolean {
  return error.extensions?.code === undefined && /^Variable "\$\w+" /.test(error.message);
}

/** Gives variable errors the same BAD_USER_INPUT shape (code, field, reason) as the zod rules'. */
export function useVariableErrorCodes(): Plugin {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors?.some(isVariableError) || result.data) return;
        const problems = findVariableProblems(args.schema, args.document, args.operationName, args.variableValues);
        if (problems.length === 0) return;
        setResult({ ...result, errors: problems.map(({ field, reason }) => badUserInput(field, reason)) });
      },
    }),
  };
}
