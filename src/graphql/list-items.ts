// Counts the pets one operation asks for: every sized list field, alias and fragment (nested lists multiply).
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { LIST_LIMIT } from '../pets/pet.ts';
import { listLimitRule } from '../pets/pet-rules.ts';
import { badUserInput } from './errors.ts';
import { fragmentsOf } from './fragments.ts';
import { slicingArgumentOf } from './list-size-declaration.ts';

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

/**
 * An integer GraphQL's Int cannot carry is a limit out of range like any other: the list-limit rule
 * judges it, so the client reads the rule ("between 1 and 100"), not graphql-js's coercion text.
 */
function outsideInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && (value < INT_MIN || value > INT_MAX);
}

function limitProblem(field: string, value: number): GraphQLError {
  // zod's int() refuses integers past 2^53 in words of its own: the rule judges ±2^31 in their place.
  const judged = listLimitRule.safeParse(Math.sign(value) * 2 ** 31);
  return badUserInput(field, judged.error?.issues[0]?.message ?? 'is out of range');
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  /** Undefined while validating: there are no variable values yet, only their defaults. */
  variables: Readonly<Record<string, unknown>> | undefined;
  defaults: Map<string, ValueNode>;
  /** Each fragment's items, worked out once per walk; null while it is being worked out (a cycle). */
  fragmentItems: Map<string, number | null>;
  /** Whether any sized list field was seen at all. */
  sized: boolean;
  problem?: GraphQLError;
}

const literal = (node: ValueNode | undefined): unknown => (node?.kind === Kind.INT ? Number(node.value) : undefined);

/** How many items a sized list field asks for: its argument (literal, variable, default), at most the rule's max. */
function sizeOf(walk: Walk, field: GraphQLField<unknown, unknown>, argument: string, node: FieldNode): number {
  const given = node.arguments?.find((arg) => arg.name.value === argument)?.value;
  let value: unknown;
  if (given?.kind === Kind.VARIABLE) {
    const name = given.name.value;
    const sent = walk.variables && Object.hasOwn(walk.variables, name);
    value = sent ? walk.variables?.[name] : literal(walk.defaults.get(name));
    if (outsideInt(value)) walk.problem ??= limitProblem(name, value);
  } else {
    value = literal(given);
    if (outsideInt(value)) walk.problem ??= limitProblem(argument, value);
  }
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    // null or absent: the resolver's default; any other value the executor refuses before resolving.
    const fallback = field.args.find((arg) => arg.name === argument)?.defaultValue;
    value = typeof fallback === 'number' ? fallback : LIST_LIMIT.default;
  }
  // More than the rule's max is refused by the field's own rule before the database is asked.
  return Math.min(Math.max(value as number, 0), LIST_LIMIT.max);
}

/**
 * The items a selection set asks for, once (nested lists multiply). A fragment's items are worked
 * out the first time it is spread and added again at every other spread, so the walk takes time
 * linear in the document, however many times its fragments expand (a chain of fragments each
 * spreading the next twice doubles per level). The first problem is still the first in document order.
 */
function itemsOf(walk: Walk, selections: SelectionSetNode, parent: GraphQLNamedType): number {
  let items = 0;
  for (const selection of selections.selections) {
    if (selection.kind === Kind.FIELD) {
      if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
      const field = parent.getFields()[selection.name.value];
      if (!field) continue;
      const argument = slicingArgumentOf(field);
      const size = argument ? sizeOf(walk, field, argument, selection) : 1;
      if (argument) {
        items += size;
        walk.sized = true;
      }
      if (selection.selectionSet) items += size * itemsOf(walk, selection.selectionSet, getNamedType(field.type));
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition ? walk.schema.getType(selection.typeCondition.name.value) : parent;
      if (type) items += itemsOf(walk, selection.selectionSet, type);
    } else {
      items += fragmentItems(walk, selection.name.value);
    }
  }
  return items;
}

function fragmentItems(walk: Walk, name: string): number {
  const known = walk.fragmentItems.get(name);
  // Validation refuses fragment cycles; until it has run, a fragment inside itself counts nothing.
  if (known !== undefined) return known ?? 0;
  const fragment = walk.fragments.get(name);
  const type = fragment && walk.schema.getType(fragment.typeCondition.name.value);
  if (!fragment || !type) return 0;
  walk.fragmentItems.set(name, null);
  const items = itemsOf(walk, fragment.selectionSet, type);
  walk.fragmentItems.set(name, items);
  return items;
}

/** What a walk needs of an operation besides its variables: the same on every request. */
export interface Prepared {
  operation: OperationDefinitionNode;
  fragments: Map<string, FragmentDefinitionNode>;
  defaults: Map<string, ValueNode>;
}

export function prepare(document: DocumentNode, operation: OperationDefinitionNode): Prepared {
  const fragments = fragmentsOf(document);
  const defaults = new Map<string, ValueNode>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) defaults.set(definition.variable.name.value, definition.defaultValue);
  }
  return { operation, fragments, defaults };
}

/** The items an operation asks for, over every sized list field, alias and fragment (nested lists multiply). */
export function measure(schema: GraphQLSchema, prepared: Prepared, variables: Walk['variables']) {
  const { operation, fragments, defaults } = prepared;
  const walk: Walk = { schema, fragments, variables, defaults, fragmentItems: new Map(), sized: false };
  const root = schema.getRootType(operation.operation);
  const items = root ? itemsOf(walk, operation.selectionSet, root) : 0;
  return { items, sized: walk.sized, problem: walk.problem };
}
