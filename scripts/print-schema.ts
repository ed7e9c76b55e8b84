// Writes schema/schema.graphql from the Pothos schema; a test fails when the committed file is stale.
import { writeFileSync } from 'node:fs';
import { printSchemaFile, SCHEMA_FILE } from '../src/graphql/print-schema.ts';

writeFileSync(SCHEMA_FILE, printSchemaFile());
console.log(`wrote ${SCHEMA_FILE}`);
