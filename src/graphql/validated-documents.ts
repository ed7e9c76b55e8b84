import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** Texts kept per instance; past this many, the first learnt goes first (clients send a few dozen). */
export const MAX_VALIDATED_DOCUMENTS = 1_000;

/**
 * The documents Yoga parsed and found valid (every plugin's rules), by exact text: the fast path runs
 * only these, so Yoga judges each once and a refused one always gets Yoga's own answer. The plugin
 * goes last, after every plugin that could refuse a document.
 */
export function createValidatedDocuments(max = MAX_VALIDATED_DOCUMENTS) {
  const byText = new Map<string, DocumentNode>();
  const textOf = new WeakMap<DocumentNode, string>();

  const plugin: Plugin = {
    onParse({ params: { source } }) {
      const text = typeof source === 'string' ? source : source.body;
      return ({ result }) => {
        if (result && !(result instanceof Error)) textOf.set(result, text);
      };
    },
    onValidate({ params: { documentAST } }) {
      return ({ valid }) => {
        if (!valid) return;
        const text = textOf.get(documentAST);
        if (text === undefined || byText.has(text)) return;
        if (byText.size >= max) byText.delete(byText.keys().next().value as string);
        byText.set(text, documentAST);
      };
    },
  };

  return {
    plugin,
    /** The document of this text, if Yoga has found it valid. */
    get: (text: string): DocumentNode | undefined => byText.get(text),
  };
}

export type ValidatedDocuments = ReturnType<typeof createValidatedDocuments>;
