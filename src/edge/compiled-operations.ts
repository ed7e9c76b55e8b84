import { type DocumentNode, getOperationAST } from 'graphql';
import type { CompiledOperation } from '../graphql/compiled-operation.ts';
import type { DirectExecution } from '../graphql/direct-execution.ts';

/**
 * One compiled operation per document and operation name, for the fast path; null for one it leaves
 * to Yoga: no such operation, several without a name, a subscription (it streams), or a document
 * graphql-jit cannot compile (Yoga's executor answers it in its own words).
 */
export function createCompiledOperations(execution: DirectExecution) {
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledOperation | null>>();

  function compiledOrNull(document: DocumentNode, operationName: string | undefined): CompiledOperation | null {
    const selected = getOperationAST(document, operationName);
    if (!selected || selected.operation === 'subscription') return null;
    try {
      return execution.compile(document, operationName);
    } catch {
      return null;
    }
  }

  return function operationOf(document: DocumentNode, operationName: string | undefined): CompiledOperation | null {
    let byName = compiled.get(document);
    if (!byName) {
      byName = new Map();
      compiled.set(document, byName);
    }
    const key = operationName ?? '';
    let operation = byName.get(key);
    if (operation === undefined) {
      operation = compiledOrNull(document, operationName);
      byName.set(key, operation);
    }
    return operation;
  };
}
