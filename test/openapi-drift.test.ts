import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadOpenApiDocument, OPENAPI_YAML_FILE } from '../src/rest/openapi-document.ts';

describe('committed OpenAPI JSON', () => {
  it('is the YAML contract, unchanged (run `npm run openapi:json` after editing schema/openapi.yaml)', () => {
    expect(loadOpenApiDocument()).toEqual(parse(readFileSync(OPENAPI_YAML_FILE, 'utf8')));
  });
});
