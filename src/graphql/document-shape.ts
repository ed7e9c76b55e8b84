import {
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { fragmentsOf, oncePerDocument, perFragment } from './document-walk.ts';

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
const EMPTY_SHAPE: Shape = { depth: 0, aliases: 0, directives: 0, cost: 0 };

const directivesOf = (node: { directives?: readonly DirectiveNode[] }) => node.directives?.length ?? 0;

/** Armor's list multiplier: a literal `first` or `last`, at least 1. */
function multiplierOf(field: FieldNode): number {
  const argument = field.arguments?.find(({ name }) => name.value === 'first' || name.value === 'last');
  return argument?.value.kind === Kind.INT ? Math.max(Number(argument.value.value), 1) : 1;
}

/**
 * Shapes each fragment once, however often it is spread. Totals are floats: a chain of spreads
 * doubling per level stays a large finite number, never a loop.
 */
function createShaper(document: DocumentNode) {
  const fragments = fragmentsOf(document);
  const fragmentShaper = (introspection: boolean) =>
    perFragment(fragments, EMPTY_SHAPE, (fragment) => {
      const inner = shapeOf(fragment.selectionSet, introspection);
      return { ...inner, directives: inner.directives + directivesOf(fragment) };
    });
  /** A fragment's shape outside introspection, and inside it. */
  const fragmentShapes = { outside: fragmentShaper(false), inside: fragmentShaper(true) };

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
    const total = { ...EMPTY_SHAPE };
    for (const selection of selectionSet.selections) {
      let shape: Shape;
      if (selection.kind === Kind.FIELD) shape = fieldShape(selection, introspection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) shape = shapeOf(selection.selectionSet, introspection);
      else shape = fragmentShapes[introspection ? 'inside' : 'outside'](selection.name.value);
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

/** Each operation's shape, worked out once per parsed document (Yoga caches documents by text). */
export const operationShapes = oncePerDocument((document): Map<OperationDefinitionNode, Shape> => {
  const shape = createShaper(document);
  const shapes = new Map<OperationDefinitionNode, Shape>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) shapes.set(definition, shape(definition));
  }
  return shapes;
});

/** The fields one level of a selection set holds under each response name, with what they select. */
interface Level {
  /** Response name -> how many fields answer to it here (simple leaves apart), and those fields plus everything under them. */
  names: Map<string, Named>;
  /** Every field in the set and under it, fragments written inline at each spread. */
  size: number;
}

interface Named {
  count: number;
  size: number;
  /** Fields without arguments or selections: graphql-js compares two of them in a step. */
  simpleLeaves: number;
}

/** What a pair of simple leaves costs the rule, against a pair of fields it must look into. */
const SIMPLE_LEAF_WEIGHT = 1 / 4;

const EMPTY_LEVEL: Level = { names: new Map(), size: 0 };

function addLevel(into: Level, level: Level) {
  for (const [name, { count, size, simpleLeaves }] of level.names) {
    const known = into.names.get(name) ?? { count: 0, size: 0, simpleLeaves: 0 };
    into.names.set(name, {
      count: known.count + count,
      size: known.size + size,
      simpleLeaves: known.simpleLeaves + simpleLeaves,
    });
  }
  into.size += level.size;
}

/**
 * graphql-js's OverlappingFieldsCanBeMergedRule compares each pair of fields sharing a response name,
 * and everything under them: its work grows with the square of what shares a name. This counts that
 * square once per selection set, in time linear in the document. Type conditions are ignored (a bound,
 * not a verdict); two simple leaves (`id id`) cost the rule far less than two fields with selections.
 */
function measureOverlap(document: DocumentNode): number {
  const fragments = fragmentsOf(document);
  const levels = new Map<SelectionSetNode, Level>();
  let overlap = 0;
  const fragmentLevel = perFragment(fragments, EMPTY_LEVEL, (fragment) => levelOf(fragment.selectionSet));

  /** One response level's fields, fragments' included; as in graphql-js, a repeated spread counts once. */
  function collect(selectionSet: SelectionSetNode, into: Level, spread: Set<string>) {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.alias?.value ?? selection.name.value;
        const size = 1 + (selection.selectionSet ? levelOf(selection.selectionSet).size : 0);
        const simpleLeaves = !selection.selectionSet && !selection.arguments?.length ? 1 : 0;
        addLevel(into, { names: new Map([[name, { count: 1, size, simpleLeaves }]]), size });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet, into, spread);
      else if (!spread.has(selection.name.value)) {
        spread.add(selection.name.value);
        addLevel(into, fragmentLevel(selection.name.value));
      }
    }
  }

  /** Each selection set once: the square of what shares a name in it is the rule's work there. */
  function levelOf(selectionSet: SelectionSetNode): Level {
    const known = levels.get(selectionSet);
    if (known) return known;
    const level: Level = { names: new Map(), size: 0 };
    collect(selectionSet, level, new Set());
    for (const { count, size, simpleLeaves } of level.names.values()) {
      if (count < 2) continue;
      const weighed = size - simpleLeaves + simpleLeaves * SIMPLE_LEAF_WEIGHT;
      overlap += weighed * weighed;
    }
    levels.set(selectionSet, level);
    return level;
  }

  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) levelOf(definition.selectionSet);
    else if (definition.kind === Kind.FRAGMENT_DEFINITION) fragmentLevel(definition.name.value);
  }
  return overlap;
}

/** What comparing fields that share a response name costs this document, once per parsed document. */
export const fieldOverlap = oncePerDocument(measureOverlap);
