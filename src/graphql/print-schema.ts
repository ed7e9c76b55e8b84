import { fileURLToPath } from 'node:url';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './schema/index.ts';

export const SCHEMA_FILE = fileURLToPath(new URL('../../schema/schema.graphql', import.meta.url));

/** Sorted, so the committed file changes only when the schema does. */
export function printSchemaFile(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
