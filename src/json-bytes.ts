// Pieces of a JSON line written straight into a byte buffer, for the one line written on every
// request (the access log): no strings to concatenate, flatten and encode again.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ZERO = 0x30;

/** The most bytes `writeJsonString` writes for a string of this length (`\u001f` is 6 bytes a unit). */
export const jsonStringBound = (length: number): number => 6 * length + 2;

/** Writes `text` as a JSON string (quotes included) at `at`; returns where it ends. */
export function writeJsonString(out: Buffer, at: number, text: string): number {
  out[at] = QUOTE;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // Printable ASCII other than the quote and the backslash is itself; anything else, JSON.stringify's way.
    if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) {
      return at + out.write(JSON.stringify(text), at);
    }
    out[at + 1 + index] = code;
  }
  out[at + 1 + text.length] = QUOTE;
  return at + text.length + 2;
}

/** Writes a whole number of zero or more (below 2^53) in decimal at `at`; returns where it ends. */
export function writeDigits(out: Buffer, at: number, value: number): number {
  // Above 2^31 (a time in ms) in two parts, each worked in 32-bit integers: on doubles, every % is
  // a call into the runtime, and a time's 13 digits were a third of a line's cost.
  if (value > 0x7fffffff) {
    const high = Math.floor(value / 1e9);
    return writePaddedDigits(out, writeDigits(out, at, high), value - high * 1e9, 9);
  }
  let digits = 1;
  for (let rest = value; rest >= 10; rest = (rest / 10) | 0) digits++;
  return writePaddedDigits(out, at, value, digits);
}

/** Writes `value` (below 2^31) in exactly `digits` digits, zeros first; returns where it ends. */
function writePaddedDigits(out: Buffer, at: number, value: number, digits: number): number {
  let end = at + digits;
  for (let rest = value | 0; end > at; rest = (rest / 10) | 0) out[--end] = ZERO + (rest % 10);
  return at + digits;
}

/** Writes tenths as the number JSON.stringify writes for tenths / 10 (12, 0.5, 3.2); returns where it ends. */
export function writeTenths(out: Buffer, at: number, tenths: number): number {
  const end = writeDigits(out, at, Math.floor(tenths / 10));
  const tenth = tenths % 10;
  if (tenth === 0) return end;
  out[end] = 0x2e;
  out[end + 1] = ZERO + tenth;
  return end + 2;
}

/** Copies `bytes` to `at`; returns where they end. */
export function writeBytes(out: Buffer, at: number, bytes: Uint8Array): number {
  out.set(bytes, at);
  return at + bytes.length;
}
