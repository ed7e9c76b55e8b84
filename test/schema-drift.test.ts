import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printSchemaFile, SCHEMA_FILE } from '../src/graphql/print-schema.ts';

describe('committed SDL', () => {
  it('matches the Pothos schema (run `npm run schema:print` after changing it)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printSchemaFile());
  });

  it('describes the contract types the issue asks for', () => {
    const sdl = printSchemaFile();
    expect(sdl).toMatch(/enum PetStatus {\s+AVAILABLE\s+PENDING\s+SOLD\s+}/);
    expect(sdl).toContain('scalar Int64');
    expect(sdl).toMatch(/createPet\(input: NewPet!\): Pet!/);
    expect(sdl).toMatch(/pet\(id: ID!\): Pet @deprecated/);
  });
});
