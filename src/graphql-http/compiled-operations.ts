import { type DocumentNode, getOperationAST } from 'graphql';
import type { CompiledOperation } from '../graphql/compiled-operation.ts';
import type { DirectExecution } from '../graphql/direct-execution.ts';

/**
 * One compiled operation per document and operation name, for the fast path; null for one it leaves
 * to Yoga: no such operation, several without a name, a subscription (it streams), or a document
 * graphql-jit cannot compile (Yoga's executor answers it in its own words).
 */
export function createCompiledOperations(execution: Pick<DirectExecution, 'compile'>) {
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledOperation | null>>();

  function compiledOrNull(document: DocumentNode, operationName: string | undefined): CompiledOperation | null {
    try {
      return execution.compile(document, operationName);
    } catch {
      return null;
    }
  }

  function operationOf(document: DocumentNode, operationName: string | undefined): CompiledOperation | null {
    const key = operationName ?? '';
    const cached = compiled.get(document)?.get(key);
    if (cached !== undefined) return cached;
    const selected = getOperationAST(document, operationName);
    // Kept only for names the document has: a client repeating one document with ever new names
    // would otherwise grow its entry without bound.
    if (!selected) return null;
    const operation = selected.operation === 'subscription' ? null : compiledOrNull(document, operationName);
    let byName = compiled.get(document);
    if (!byName) {
      byName = new Map();
      compiled.set(document, byName);
    }
    byName.set(key, operation);
    return operation;
  }

  return {
    operationOf,
    /** How many operation names of this document are kept: at most its operations, and '' for none. */
    keptFor: (document: DocumentNode): number => compiled.get(document)?.size ?? 0,
  };
}
