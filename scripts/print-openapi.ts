// Writes schema/openapi.json from schema/openapi.yaml (the contract as written); a test fails when
// the committed JSON copy is stale. The service reads the JSON, so it needs no YAML parser.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { OPENAPI_JSON_FILE, OPENAPI_YAML_FILE } from '../src/rest/openapi-document.ts';

writeFileSync(OPENAPI_JSON_FILE, `${JSON.stringify(parse(readFileSync(OPENAPI_YAML_FILE, 'utf8')), null, 2)}\n`);
console.log(`wrote ${OPENAPI_JSON_FILE}`);
