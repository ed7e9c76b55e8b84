import {
  type DocumentNode,
  GraphQLEnumType,
  type GraphQLError,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLSchema,
  getNullableType,
  getOperationAST,
  isInputObjectType,
  isInputType,
  isLeafType,
  isListType,
  isNonNullType,
  typeFromAST,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { capErrors, MAX_ERRORS } from './error-limit.ts';
import { badUserInput, ErrorCode } from './errors.ts';
import type { ExecutionHooks } from './execution-hooks.ts';
import { domainRuleOf } from './input-rules.ts';

interface VariableProblem {
  field: string;
  reason: string;
}

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

/** The first message of the field's domain rule (input-rules.ts) for a value its type accepts. */
function ruleProblem(field: GraphQLInputField, value: unknown): string | undefined {
  const rule = domainRuleOf(field);
  if (!rule) return undefined;
  const type = getNullableType(field.type);
  const coerced = value !== null && isLeafType(type) ? type.parseValue(value) : value;
  const judged = rule.safeParse(coerced);
  return judged.success ? undefined : (judged.error.issues[0]?.message ?? 'is invalid');
}

/**
 * Walks a variable's value against its type, the way graphql-js coerces it, and each input field's
 * domain rule, reporting each problem as data (the argument path and the rule broken).
 */
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
    if (typeof value !== 'object' || Array.isArray(value)) {
      problems.push({ field: path, reason: `must be an object (${type.name})` });
      return;
    }
    const fields = type.getFields();
    const given = value as Record<string, unknown>;
    for (const name in given) {
      if (problems.length > MAX_ERRORS) return;
      if (!Object.hasOwn(fields, name)) problems.push({ field: `${path}.${name}`, reason: 'is not a known field' });
    }
    for (const field of Object.values(fields)) {
      const fieldValue = given[field.name];
      if (fieldValue === undefined && field.defaultValue !== undefined) continue;
      const found = problems.length;
      walk(field.type, fieldValue, `${path}.${field.name}`, problems);
      // A value of the right type may still break the field's domain rule: said now, with the rest.
      if (problems.length === found && fieldValue !== undefined) {
        const reason = ruleProblem(field, fieldValue);
        if (reason) problems.push({ field: `${path}.${field.name}`, reason });
      }
    }
    return;
  }
  const reason = leafProblem(type, value);
  if (reason) problems.push({ field: path, reason });
}

/** The problems of an operation's variables, by argument path (`input.name`), from the types alone. */
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

/** `input.name` and `i.name` name the same field: the argument's name or the variable's, then the path. */
const withinArgument = (field: string) => field.slice(field.indexOf('.') + 1);

/** Whether the problems found again say at least what each resolver's error said (none is lost). */
function coversResolverErrors(errors: readonly GraphQLError[], problems: VariableProblem[]): boolean {
  const found = new Set(problems.map(({ field }) => withinArgument(field)));
  return errors.every(
    (error) =>
      error.path === undefined ||
      (typeof error.extensions?.field === 'string' && found.has(withinArgument(error.extensions.field))),
  );
}

/**
 * Gives input errors the same BAD_USER_INPUT shape (code, field, reason) whichever check found them,
 * one error per invalid field: the types' and the domain rules' problems, all found in one walk of
 * the variables. The executors (graphql-js, or graphql-jit) say type problems only in English
 * sentences, each in its own words, and the zod rules run only once every type is right, each
 * resolver reporting its first. Any other result is returned as it is, but with at most MAX_ERRORS
 * errors and one "too many errors" entry (both faces pass here).
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
  if (problems.length === 0 || !coversResolverErrors(result.errors ?? [], problems)) return capErrors(result);
  return capErrors({ ...result, errors: problems.map(({ field, reason }) => badUserInput(field, reason)) });
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
