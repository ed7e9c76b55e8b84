/**
 * Opaque keyset cursors. Clients must not build them, so the id is wrapped and base64url-encoded;
 * the prefix lets us change the format later without misreading old cursors.
 */
const PREFIX = 'pet:';

export function encodeCursor(petId: number): string {
  return Buffer.from(`${PREFIX}${petId}`, 'utf8').toString('base64url');
}

/** Returns the id the cursor points after, or null when the cursor is not one of ours. */
export function decodeCursor(cursor: string): number | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^pet:([1-9][0-9]{0,15})$/.exec(text);
  if (!match?.[1]) return null;
  const id = Number(match[1]);
  // Re-encoding guards against non-canonical base64 spellings of the same bytes.
  return Number.isSafeInteger(id) && encodeCursor(id) === cursor ? id : null;
}
