import { createGraphQLError } from '@graphql-tools/utils';
import {
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  Kind,
  type OperationDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { measure, type Prepared, prepare } from './list-items.ts';

export { listSize } from './list-size-declaration.ts';

export function queryTooLarge(items: number, maxItems: number): GraphQLError {
  return createGraphQLError(
    `This operation asks for up to ${items} pets; one operation may ask for at most ${maxItems} ` +
      '(the sum of pets(limit:) and petsConnection(first:) over every field, alias and fragment)',
    { extensions: { code: 'QUERY_TOO_LARGE', items, maxItems, http: { status: 400, spec: true } } },
  );
}

/**
 * The list-size limit for one execution, with its variables: the error that refuses it, or undefined.
 * Documents are parsed once and cached (Yoga's cache, the REST routes' constants), so what a walk
 * needs besides the variables is worked out once per operation, and whether it asks for a list at
 * all: most (a pet by id) never need the walk per request.
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

/**
 * A cost limit that counts list sizes: one operation may ask for at most `maxItems` pets, counted
 * from its arguments (variables included, with defaults of 20) and refused before any resolver
 * runs. GraphQL Armor's cost limit counts fields, not the items a list argument asks for.
 */
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
