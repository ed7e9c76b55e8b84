import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  getOperationAST,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LIST_LIMIT } from '../pets/pet.ts';
import { listLimitRule } from '../pets/pet-rules.ts';
import { fragmentsOf, perFragment } from './document-walk.ts';
import { badUserInput, codedError } from './errors.ts';

/** A list field's size declaration, after the cost spec's `@listSize(slicingArguments:)`. */
interface ListSize {
  slicingArguments: readonly [string];
}

/** Declares on a schema field that this argument sets how many items the field returns. */
export function listSize(slicingArgument: string): { listSize: ListSize } {
  return { listSize: { slicingArguments: [slicingArgument] } };
}

/** The argument that sizes a list field, as the schema declares it; undefined for other fields. */
function slicingArgumentOf(field: GraphQLField<unknown, unknown>): string | undefined {
  return (field.extensions as { listSize?: ListSize }).listSize?.slicingArguments[0];
}

// Counting the pets one operation asks for: every sized list field, alias and fragment (nested lists multiply).
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
  /** Undefined while validating: there are no variable values yet, only their defaults. */
  variables: Readonly<Record<string, unknown>> | undefined;
  defaults: Map<string, ValueNode>;
  /** Each fragment's items, worked out once per walk. */
  fragmentItems: (name: string) => number;
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

/** The items a selection set asks for (nested lists multiply); each fragment is worked out once (perFragment). */
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
      items += walk.fragmentItems(selection.name.value);
    }
  }
  return items;
}

/** What a walk needs of an operation besides its variables: the same on every request. */
interface Prepared {
  operation: OperationDefinitionNode;
  fragments: Map<string, FragmentDefinitionNode>;
  defaults: Map<string, ValueNode>;
}

function prepare(document: DocumentNode, operation: OperationDefinitionNode): Prepared {
  const fragments = fragmentsOf(document);
  const defaults = new Map<string, ValueNode>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) defaults.set(definition.variable.name.value, definition.defaultValue);
  }
  return { operation, fragments, defaults };
}

/** The items an operation asks for, over every sized list field, alias and fragment (nested lists multiply). */
function measure(schema: GraphQLSchema, prepared: Prepared, variables: Walk['variables']) {
  const { operation, fragments, defaults } = prepared;
  const walk: Walk = { schema, variables, defaults, fragmentItems: () => 0, sized: false };
  walk.fragmentItems = perFragment(fragments, 0, (fragment) => {
    const type = schema.getType(fragment.typeCondition.name.value);
    return type ? itemsOf(walk, fragment.selectionSet, type) : 0;
  });
  const root = schema.getRootType(operation.operation);
  const items = root ? itemsOf(walk, operation.selectionSet, root) : 0;
  return { items, sized: walk.sized, problem: walk.problem };
}

export function queryTooLarge(items: number, maxItems: number): GraphQLError {
  return codedError(
    `This operation asks for up to ${items} pets; one operation may ask for at most ${maxItems} ` +
      '(the sum of pets(limit:) and petsConnection(first:) over every field, alias and fragment)',
    'QUERY_TOO_LARGE',
    { status: 400, spec: true },
    { items, maxItems },
  );
}

/**
 * The list-size limit for one execution, with its variables: the refusal, or undefined. What a walk
 * needs besides the variables is worked out once per operation, so most (a pet by id) skip it.
 */
export function createListSizeCheck(maxItems: number) {
  /** Per operation: what its walk needs, or null when it asks for no sized list. */
  const prepared = new WeakMap<OperationDefinitionNode, Prepared | null>();
  const preparedFor = (schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode) => {
    let found = prepared.get(operation);
    if (found === undefined) {
      found = prepare(document, operation);
      if (!measure(schema, found, undefined).sized) found = null;
      prepared.set(operation, found);
    }
    return found;
  };
  return (
    schema: GraphQLSchema,
    document: DocumentNode,
    operationName: string | null | undefined,
    variables: Readonly<Record<string, unknown>> | null | undefined,
  ): GraphQLError | undefined => {
    // An empty name selects as no name did before; graphql-js's executor refuses it either way.
    const operation = getOperationAST(document, operationName || undefined);
    const walkable = operation && preparedFor(schema, document, operation);
    if (!walkable) return undefined;
    const { items, problem } = measure(schema, walkable, variables ?? {});
    if (problem) return problem;
    return items > maxItems ? queryTooLarge(items, maxItems) : undefined;
  };
}

export type ListSizeCheck = ReturnType<typeof createListSizeCheck>;

/** At most `maxItems` pets per operation, counted from its arguments before any resolver runs (Armor counts fields). */
export function useListSizeLimit(check: ListSizeCheck): Plugin {
  return {
    onValidate: ({ params, setResult }) => {
      for (const definition of params.documentAST.definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
        const { problem } = measure(params.schema, prepare(params.documentAST, definition), undefined);
        if (problem) return setResult([problem]);
      }
    },
    onExecute: ({ args, setResultAndStopExecution }) => {
      const problem = check(args.schema, args.document, args.operationName, args.variableValues);
      if (problem) setResultAndStopExecution({ errors: [problem] });
    },
  };
}
