import { type DocumentNode, Kind, type SelectionSetNode } from 'graphql';
import { fragmentsOf } from './fragments.ts';

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

const EMPTY: Level = { names: new Map(), size: 0 };

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
 * graphql-js's OverlappingFieldsCanBeMergedRule compares, in every selection set, each pair of
 * fields that share a response name (fragments included), and the fields under each pair, pair by
 * pair: its work grows with the square of what shares a name. This counts that square once per
 * selection set, sizes of fragments worked out once each, so it takes time linear in the document.
 * Type conditions are ignored: fields that could never meet still count (a bound, not a verdict);
 * two simple leaves (`id id`) cost the rule far less than two fields it must look into.
 */
function measureOverlap(document: DocumentNode): number {
  const fragments = fragmentsOf(document);
  const levels = new Map<SelectionSetNode, Level>();
  /** A fragment's level, or null while it is being worked out (a cycle, which validation refuses). */
  const fragmentLevels = new Map<string, Level | null>();
  let overlap = 0;

  function fragmentLevel(name: string): Level {
    const known = fragmentLevels.get(name);
    if (known !== undefined) return known ?? EMPTY;
    const fragment = fragments.get(name);
    if (!fragment) return EMPTY;
    fragmentLevels.set(name, null);
    const level = levelOf(fragment.selectionSet);
    fragmentLevels.set(name, level);
    return level;
  }

  /**
   * The fields of one response level: inline fragments and spreads add theirs to it, as graphql-js
   * groups them; like graphql-js, a fragment spread twice in one level counts once.
   */
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

const overlapByDocument = new WeakMap<DocumentNode, number>();

/**
 * How much comparing the fields that share a response name costs this document, worked out once
 * per parsed document: the sum, over selection sets and response names used more than once, of the
 * square of the fields under that name. Zero when no selection set repeats a name.
 */
export function fieldOverlap(document: DocumentNode): number {
  let overlap = overlapByDocument.get(document);
  if (overlap === undefined) {
    overlap = measureOverlap(document);
    overlapByDocument.set(document, overlap);
  }
  return overlap;
}
