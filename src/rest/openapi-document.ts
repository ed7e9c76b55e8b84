import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const OPENAPI_FILE = fileURLToPath(new URL('../../schema/openapi.yaml', import.meta.url));

/** The committed REST contract, parsed once; the adapter serves it and the tests validate against it. */
export function loadOpenApiDocument(): Record<string, unknown> {
  return parse(readFileSync(OPENAPI_FILE, 'utf8')) as Record<string, unknown>;
}
