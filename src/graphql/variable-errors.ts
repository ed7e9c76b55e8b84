import { createGraphQLError } from '@graphql-tools/utils';
import {
  type DocumentNode,
  type FieldNode,
  type GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  Kind,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { capErrors } from './error-limit.ts';
import { badUserInput, ErrorCode } from './errors.ts';
import type { ExecutionHooks } from './execution-hooks.ts';
import { findVariableProblems, type VariableProblem } from './variable-problems.ts';

type Result = { data?: unknown; errors?: readonly GraphQLError[] };

/**
 * No data, and every error is either without a path (execution never started: the variables, or the
 * operation, were refused) or a BAD_USER_INPUT from a resolver (a domain rule refused an argument).
 */
function refusedInput(result: Result): boolean {
  const errors = result.errors ?? [];
  return (
    result.data == null &&
    errors.length > 0 &&
    errors.every((error) => error.path === undefined || error.extensions?.code === ErrorCode.BAD_USER_INPUT)
  );
}

/** The operation's root fields by response key (alias or name), through fragments, each fragment once. */
function rootFields(document: DocumentNode, selectionSet: SelectionSetNode): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  const seen = new Set<string>();
  const collect = ({ selections }: SelectionSetNode): void => {
    for (const selection of selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        fields.set(key, [...(fields.get(key) ?? []), selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = document.definitions.find(
          (definition) =>
            definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === selection.name.value,
        );
        if (fragment?.kind === Kind.FRAGMENT_DEFINITION) collect(fragment.selectionSet);
      }
    }
  };
  collect(selectionSet);
  return fields;
}

/** The argument path each variable fills in a field (`createPet(input: $pet)`: `pet` fills `input`). */
function argumentPaths(field: FieldNode): Map<string, string> {
  const paths = new Map<string, string>();
  const visit = (value: ValueNode, path: string): void => {
    if (value.kind === Kind.VARIABLE && !paths.has(value.name.value)) paths.set(value.name.value, path);
    else if (value.kind === Kind.OBJECT)
      for (const item of value.fields) visit(item.value, `${path}.${item.name.value}`);
    else if (value.kind === Kind.LIST)
      for (const [index, item] of value.values.entries()) visit(item, `${path}.${index}`);
  };
  for (const argument of field.arguments ?? []) visit(argument.value, argument.name.value);
  return paths;
}

/**
 * The problems as errors of the root fields whose resolvers refused them: by argument path, with the
 * field's `path` and `locations`, as the resolver's own error had. A problem of a field that never ran
 * (a mutation after the one that failed) stays a variable's. Undefined when a resolver's error is not
 * among them (a rule the walk does not know): the resolvers' errors then stand as they are.
 */
function asResolverErrors(
  { document, operationName }: { document: DocumentNode; operationName: string | null | undefined },
  errors: readonly GraphQLError[],
  problems: VariableProblem[],
) {
  const operation = getOperationAST(document, operationName);
  const fields = operation ? rootFields(document, operation.selectionSet) : new Map<string, FieldNode[]>();
  const refused = errors.flatMap(({ path }) => {
    const nodes = fields.get(String(path?.[0]));
    return path && nodes?.[0] ? [{ path, nodes, paths: argumentPaths(nodes[0]) }] : [];
  });
  const coded = problems.map(({ field, reason }) => {
    const [variable = field, ...rest] = field.split('.');
    const at = refused.find(({ paths }) => paths.has(variable));
    if (!at) return badUserInput(field, reason);
    const { message, extensions } = badUserInput([at.paths.get(variable), ...rest].join('.'), reason);
    return createGraphQLError(message, { nodes: at.nodes, path: at.path, extensions });
  });
  const said = new Set(coded.map((error) => `${error.path?.[0]} ${error.extensions.field}`));
  return errors.every((error) => said.has(`${error.path?.[0]} ${error.extensions?.field}`)) ? coded : undefined;
}

/**
 * Gives input errors the same BAD_USER_INPUT shape (code, field, reason) whichever check found them,
 * one error per invalid field, in the schema's field order: the types' and the domain rules' problems,
 * all found in one walk of the variables. The executors (graphql-js, or graphql-jit) say type problems
 * only in English sentences, each in its own words, and the zod rules run only once every type is
 * right, each resolver reporting its first. Any other result is returned as it is, but with at most
 * MAX_ERRORS errors and one "too many errors" entry (both faces pass here).
 */
export function withVariableErrorCodes<R extends Result>(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  result: R,
): R {
  if (!refusedInput(result)) return capErrors(result);
  const problems = findVariableProblems(schema, document, operationName, variables);
  if (problems.length === 0) return capErrors(result);
  const errors = result.errors ?? [];
  // Without a path, execution never started: the variables' own errors, named by variable.
  const coded = errors.every((error) => error.path === undefined)
    ? problems.map(({ field, reason }) => badUserInput(field, reason))
    : asResolverErrors({ document, operationName }, errors, problems);
  return capErrors(coded ? { ...result, errors: coded } : result);
}

/** withVariableErrorCodes on every execution through Yoga's envelop. */
export function useVariableErrorCodes(): Plugin {
  const afterExecution: ExecutionHooks = {
    onExecuteDone: ({ args, result, setResult }) => {
      if (!('errors' in result)) return;
      const coded = withVariableErrorCodes(args.schema, args.document, args.operationName, args.variableValues, result);
      if (coded !== result) setResult(coded);
    },
  };
  return { onExecute: () => afterExecution };
}
