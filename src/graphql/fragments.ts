import { type DocumentNode, type FragmentDefinitionNode, Kind } from 'graphql';

/** A document's fragment definitions by name, for the walks that follow spreads (the last of a repeated name). */
export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return fragments;
}
