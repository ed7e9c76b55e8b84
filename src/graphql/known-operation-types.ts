import { GraphQLError, type ValidationRule } from 'graphql';

/**
 * An operation whose type the schema has no root for is a validation error,
 * as graphql-js 17's KnownOperationTypesRule makes it; graphql-js 16 lets it through to execution,
 * which throws.
 */
export const knownOperationTypesRule: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (context.getSchema().getRootType(node.operation)) return;
    context.reportError(
      new GraphQLError(`The ${node.operation} operation is not supported by the schema.`, { nodes: node }),
    );
  },
});
