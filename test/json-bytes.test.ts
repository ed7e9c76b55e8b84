import { describe, expect, it } from 'vitest';
import { jsonStringBound, writeDigits, writeJsonString, writeTenths } from '../src/json-bytes.ts';

/** What a writer puts at offset 3 of a buffer, as text; the offset shows it writes where it is told. */
function written(write: (out: Buffer, at: number) => number, room = 1_024): string {
  const out = Buffer.alloc(room + 3);
  const end = write(out, 3);
  return out.toString('utf8', 3, end);
}

describe('JSON written straight as bytes, as JSON.stringify would write it', () => {
  it.each([
    ['plain ASCII', '/v1/pets?limit=20&offset=0'],
    ['empty', ''],
    ['quotes and backslashes', 'say "hi" \\ bye'],
    ['control characters', 'tab\there, newline\n, bell\u0007, delete\u007f'],
    ['wide characters and a surrogate pair', 'Rex ü € 🐈 ℃'],
    ['lone surrogates', 'broken \ud800 and \udc00 halves'],
    ['line and paragraph separators', 'a\u2028b\u2029c'],
  ])('strings: %s', (_name, text) => {
    expect(written((out, at) => writeJsonString(out, at, text), jsonStringBound(text.length))).toBe(
      JSON.stringify(text),
    );
  });

  it('whole numbers, below and above 2^31 (times in ms) and up to 2^53', () => {
    const values = [0, 1, 9, 10, 99, 100, 2 ** 31 - 1, 2 ** 31, 999_999_999, 1_000_000_000, 1_000_000_001];
    values.push(4_999_999_999, 1_795_484_012_821, 10_000_000_000_000, 2 ** 53 - 1);
    // And a spread of every magnitude between.
    for (let value = 7; value < 2 ** 53; value = value * 3 + 1) values.push(value);
    for (const value of values) expect(written((out, at) => writeDigits(out, at, value))).toBe(String(value));
  });

  it('tenths, as the number tenths / 10 (a duration in ms to one decimal)', () => {
    for (let tenths = 0; tenths < 100_000; tenths += 7) {
      expect(written((out, at) => writeTenths(out, at, tenths))).toBe(String(tenths / 10));
    }
  });
});
