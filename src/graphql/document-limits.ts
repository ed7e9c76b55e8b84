import {
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { fragmentsOf } from './fragments.ts';

/** What one selection set asks for once every fragment in it is written inline. */
export interface Shape {
  /** Nested field levels; introspection (`__schema`, `__type`) counts none, as GraphiQL's query is deep. */
  depth: number;
  /** Aliased fields, `__typename` aside. */
  aliases: number;
  directives: number;
  /** GraphQL Armor's cost formula, with fragments flattened; an introspection field costs 1. */
  cost: number;
}

/** GraphQL Armor's cost-limit defaults, so documents without fragments cost what they cost there. */
const OBJECT_COST = 2;
const SCALAR_COST = 1;
const DEPTH_COST_FACTOR = 1.5;
const INTROSPECTION_ROOTS = new Set(['__schema', '__type']);
const EMPTY: Shape = { depth: 0, aliases: 0, directives: 0, cost: 0 };

const directivesOf = (node: { directives?: readonly DirectiveNode[] }) => node.directives?.length ?? 0;

/** Armor's list multiplier: a literal `first` or `last`, at least 1. */
function multiplierOf(field: FieldNode): number {
  const argument = field.arguments?.find(({ name }) => name.value === 'first' || name.value === 'last');
  return argument?.value.kind === Kind.INT ? Math.max(Number(argument.value.value), 1) : 1;
}

/**
 * Shapes each fragment once, however often it is spread: a spread adds its fragment's totals, so
 * judging a document takes time linear in its size, whatever its fragments expand to (graphql-js's
 * NoFragmentCyclesRule visits each fragment once for the same reason). Totals are floats: a chain
 * of spreads doubling per level stays a large finite number, never a loop.
 */
function createShaper(document: DocumentNode) {
  const fragments = fragmentsOf(document);
  /** A fragment's shape inside introspection or outside it, or null while it is being shaped (a cycle, which validation refuses). */
  const shaped = [new Map<string, Shape | null>(), new Map<string, Shape | null>()] as const;

  function fragmentShape(name: string, introspection: boolean): Shape {
    const memo = shaped[introspection ? 1 : 0];
    const known = memo.get(name);
    if (known !== undefined) return known ?? EMPTY;
    const fragment = fragments.get(name);
    if (!fragment) return EMPTY;
    memo.set(name, null);
    const inner = shapeOf(fragment.selectionSet, introspection);
    const shape = { ...inner, directives: inner.directives + directivesOf(fragment) };
    memo.set(name, shape);
    return shape;
  }

  function fieldShape(field: FieldNode, introspection: boolean): Shape {
    const inside = introspection || INTROSPECTION_ROOTS.has(field.name.value);
    const aliased = field.alias && field.alias.value !== '__typename' && field.name.value !== '__typename';
    const own = { aliases: aliased ? 1 : 0, directives: directivesOf(field) };
    if (!field.selectionSet) return { depth: inside ? 0 : 1, cost: SCALAR_COST, ...own };
    const sub = shapeOf(field.selectionSet, inside);
    return {
      depth: inside ? 0 : 1 + sub.depth,
      aliases: own.aliases + sub.aliases,
      directives: own.directives + sub.directives,
      cost: inside ? SCALAR_COST + sub.cost : (OBJECT_COST + DEPTH_COST_FACTOR * sub.cost) * multiplierOf(field),
    };
  }

  /** Inside introspection every field costs 1 and adds no depth: the totals still bound its expansion. */
  function shapeOf(selectionSet: SelectionSetNode, introspection: boolean): Shape {
    const total = { ...EMPTY };
    for (const selection of selectionSet.selections) {
      let shape: Shape;
      if (selection.kind === Kind.FIELD) shape = fieldShape(selection, introspection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) shape = shapeOf(selection.selectionSet, introspection);
      else shape = fragmentShape(selection.name.value, introspection);
      total.depth = Math.max(total.depth, shape.depth);
      total.aliases += shape.aliases;
      total.directives += shape.directives + (selection.kind === Kind.FIELD ? 0 : directivesOf(selection));
      total.cost += shape.cost;
    }
    return total;
  }

  return (operation: OperationDefinitionNode): Shape => {
    const shape = shapeOf(operation.selectionSet, false);
    return { ...shape, directives: shape.directives + directivesOf(operation) };
  };
}

const shapesByDocument = new WeakMap<DocumentNode, Map<OperationDefinitionNode, Shape>>();

/** Each operation's shape, worked out once per parsed document (Yoga caches documents by text). */
export function operationShapes(document: DocumentNode): Map<OperationDefinitionNode, Shape> {
  let shapes = shapesByDocument.get(document);
  if (!shapes) {
    const shape = createShaper(document);
    shapes = new Map();
    for (const definition of document.definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION) shapes.set(definition, shape(definition));
    }
    shapesByDocument.set(document, shapes);
  }
  return shapes;
}
