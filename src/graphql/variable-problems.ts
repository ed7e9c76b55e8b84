import {
  type DocumentNode,
  GraphQLEnumType,
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
  typeFromAST,
} from 'graphql';
import { MAX_ERRORS } from './error-limit.ts';
import { domainRuleOf, nullReasonOf } from './input-rules.ts';

/** A problem with a variable's value: where (`input.name`, by variable name) and the rule broken. */
export interface VariableProblem {
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

/**
 * An input object's own fields first, in the schema's order (the contract's), then the keys it does
 * not have, in the order given: what the error cap leaves out is never a field the type declares.
 */
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
export function findVariableProblems(
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
