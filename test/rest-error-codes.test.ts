import { describe, expect, it } from 'vitest';
import { REST_ERRORS } from '../src/rest/http-errors.ts';
import { errorCodes, loadOpenApiDocument } from './support/openapi-contract.ts';
import { ERROR_STATUS } from './support/rest-types.ts';

describe('the Error code set', () => {
  it("is the same closed set in the document, in the service and in the tests' types", () => {
    expect([...errorCodes()].sort()).toEqual(Object.keys(REST_ERRORS).sort());
    expect(Object.keys(ERROR_STATUS)).toEqual(errorCodes());
  });

  it('gives each code the HTTP status the document table gives it', () => {
    const schemas = (loadOpenApiDocument().components as { schemas: Record<string, { description: string }> }).schemas;
    const table = Object.fromEntries(
      [...schemas.Error!.description.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [
        code,
        Number(status),
      ]),
    );
    expect(Object.keys(table).sort()).toEqual([...errorCodes()].sort());
    expect(table).toEqual(REST_ERRORS);
    expect(table).toEqual(ERROR_STATUS);
  });
});
