import type { GraphQLField } from 'graphql';

/** A list field's size declaration, after the cost spec's `@listSize(slicingArguments:)`. */
interface ListSize {
  slicingArguments: readonly [string];
}

/** Declares on a schema field that this argument sets how many items the field returns. */
export function listSize(slicingArgument: string): { listSize: ListSize } {
  return { listSize: { slicingArguments: [slicingArgument] } };
}

/** The argument that sizes a list field, as the schema declares it; undefined for other fields. */
export function slicingArgumentOf(field: GraphQLField<unknown, unknown>): string | undefined {
  return (field.extensions as { listSize?: ListSize }).listSize?.slicingArguments[0];
}
