import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/** A document's fragment definitions by name, for the walks that follow spreads (the last of a repeated name). */
export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return fragments;
}

/** A measure of a parsed document, worked out once per document (Yoga caches documents by text). */
export function oncePerDocument<T>(measure: (document: DocumentNode) => T): (document: DocumentNode) => T {
  const measured = new WeakMap<DocumentNode, T>();
  return (document) => {
    if (!measured.has(document)) measured.set(document, measure(document));
    return measured.get(document) as T;
  };
}

/**
 * A walk's value for each fragment, worked out once and reused at every spread, so a walk is linear in
 * the document. An unknown fragment, or one spread inside itself, is worth `none`.
 */
export function perFragment<T>(
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  none: T,
  work: (fragment: FragmentDefinitionNode) => T,
): (name: string) => T {
  const worked = new Map<string, T>();
  return (name) => {
    if (worked.has(name)) return worked.get(name) as T;
    const fragment = fragments.get(name);
    if (!fragment) return none;
    worked.set(name, none);
    const value = work(fragment);
    worked.set(name, value);
    return value;
  };
}

/** An operation's root fields by response key, each fragment written in once, as graphql-js collects them. */
export function rootFieldsOf(document: DocumentNode, operation: OperationDefinitionNode): Map<string, FieldNode[]> {
  const fragments = fragmentsOf(document);
  const fields = new Map<string, FieldNode[]>();
  const spread = new Set<string>();
  const collect = ({ selections }: SelectionSetNode): void => {
    for (const selection of selections) {
      if (selection.kind === Kind.FIELD) {
        const key = (selection.alias ?? selection.name).value;
        const known = fields.get(key);
        if (known) known.push(selection);
        else fields.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet);
      else if (!spread.has(selection.name.value)) {
        spread.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(operation.selectionSet);
  return fields;
}
