import { createGraphQLError } from '@graphql-tools/utils';
import {
  type DocumentNode,
  type FieldNode,
  GraphQLEnumType,
  type GraphQLError,
  type GraphQLInputField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
  getNullableType,
  getOperationAST,
  isInputObjectType,
  isInputType,
  isLeafType,
  isListType,
  isNonNullType,
  Kind,
  typeFromAST,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { rootFieldsOf } from './document-walk.ts';
import { badUserInput, capErrors, ErrorCode, MAX_ERRORS } from './errors.ts';
import type { ExecutionHooks } from './execution-hooks.ts';
import { domainRuleOf, nullReasonOf } from './input-rules.ts';

/** A problem with a variable's value: where (`input.name`, by variable name) and the rule broken. */
interface VariableProblem {
  field: string;
  reason: string;
}

/** The reason given for a key the input type does not have (the REST message counts these apart). */
export const UNKNOWN_FIELD_REASON = 'is not a known field';

function leafProblem(type: GraphQLInputType, value: unknown): string | undefined {
  if (!isLeafType(type)) return undefined;
  try {
    if (type.parseValue(value) !== undefined) return undefined;
  } catch (error) {
    if (!(type instanceof GraphQLEnumType)) return (error as Error).message.replace(/\.$/, '');
  }
  return type instanceof GraphQLEnumType
    ? `must be a ${type.name}: one of ${type
        .getValues()
        .map(({ name }) => name)
        .join(', ')}`
    : `is not a valid ${type.name}`;
}

/** What a value its type accepts still breaks: the input type's refusal of null, or the field's domain rule. */
function ruleProblem(parent: GraphQLInputObjectType, field: GraphQLInputField, value: unknown): string | undefined {
  if (value === null) return nullReasonOf(parent, field);
  const rule = domainRuleOf(field);
  if (!rule) return undefined;
  const type = getNullableType(field.type);
  const judged = rule.safeParse(isLeafType(type) ? type.parseValue(value) : value);
  return judged.success ? undefined : (judged.error.issues[0]?.message ?? 'is invalid');
}

/** Declared fields first, in the schema's order, then unknown keys: the cap never leaves out a declared one. */
function walkObject(
  type: GraphQLInputObjectType,
  given: Record<string, unknown>,
  path: string,
  problems: VariableProblem[],
) {
  const fields = type.getFields();
  for (const field of Object.values(fields)) {
    const value = Object.hasOwn(given, field.name) ? given[field.name] : undefined;
    if (value === undefined && field.defaultValue !== undefined) continue;
    const found = problems.length;
    walk(field.type, value, `${path}.${field.name}`, problems);
    // A value of the right type may still break a rule: said now, with the rest.
    if (problems.length === found && value !== undefined) {
      const reason = ruleProblem(type, field, value);
      if (reason) problems.push({ field: `${path}.${field.name}`, reason });
    }
  }
  for (const name in given) {
    if (problems.length > MAX_ERRORS) return;
    if (!Object.hasOwn(fields, name)) problems.push({ field: `${path}.${name}`, reason: UNKNOWN_FIELD_REASON });
  }
}

/** Walks a variable's value against its type, the way graphql-js coerces it, reporting each problem as data. */
function walk(type: GraphQLInputType, value: unknown, path: string, problems: VariableProblem[]): void {
  // One past the cap is enough to know the answer is capped: the rest of the value is not read.
  if (problems.length > MAX_ERRORS) return;
  if (isNonNullType(type)) {
    if (value === null) problems.push({ field: path, reason: 'must not be null' });
    else if (value === undefined) problems.push({ field: path, reason: 'is required' });
    else walk(type.ofType, value, path, problems);
    return;
  }
  if (value === null || value === undefined) return;
  if (isListType(type)) {
    const items = Array.isArray(value) ? value : [value];
    for (const [index, item] of items.entries()) walk(type.ofType, item, `${path}.${index}`, problems);
    return;
  }
  if (isInputObjectType(type)) {
    if (typeof value === 'object' && !Array.isArray(value))
      walkObject(type, value as Record<string, unknown>, path, problems);
    else problems.push({ field: path, reason: `must be an object (${type.name})` });
    return;
  }
  const reason = leafProblem(type, value);
  if (reason) problems.push({ field: path, reason });
}

/** The problems of an operation's variables, by variable path (`input.name`), in the schema's order. */
function findVariableProblems(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): VariableProblem[] {
  const problems: VariableProblem[] = [];
  for (const definition of getOperationAST(document, operationName)?.variableDefinitions ?? []) {
    if (problems.length > MAX_ERRORS) break;
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type);
    if (!type || !isInputType(type)) continue;
    // Own properties only: a variable named `constructor` is not Object's.
    const value = variables && Object.hasOwn(variables, name) ? variables[name] : undefined;
    if (value === undefined && definition.defaultValue) continue;
    walk(type, value, name, problems);
  }
  return problems;
}

type Result = { data?: unknown; errors?: readonly GraphQLError[] };

/** No data, and every error is a refusal before execution (no path) or a resolver's BAD_USER_INPUT. */
function refusedInput(result: Result): boolean {
  const errors = result.errors ?? [];
  return (
    result.data == null &&
    errors.length > 0 &&
    errors.every((error) => error.path === undefined || error.extensions?.code === ErrorCode.BAD_USER_INPUT)
  );
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
 * The problems as errors of the root fields whose resolvers refused them (argument path, `path`,
 * `locations`); one of a field that never ran stays a variable's. Undefined when a resolver's error
 * is not among them (a rule the walk does not know): the resolvers' errors then stand.
 */
function asResolverErrors(
  { document, operationName }: { document: DocumentNode; operationName: string | null | undefined },
  errors: readonly GraphQLError[],
  problems: VariableProblem[],
) {
  const operation = getOperationAST(document, operationName);
  const fields = operation ? rootFieldsOf(document, operation) : new Map<string, FieldNode[]>();
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
 * One BAD_USER_INPUT error (code, field, reason) per invalid field, in the schema's order, whichever
 * check found it: the executors say type problems only in English sentences, and the zod rules run
 * only once every type is right. Any other result stays as it is, capped at MAX_ERRORS errors.
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
