import { sha256Hex } from '../auth/api-key-store.ts';

/** GraphQL-over-HTTP's document id, `sha256:` and lower-case hex: the one form ids are stored and logged in. */
export const DOCUMENT_ID = /^sha256:[0-9a-f]{64}$/;

const BARE_HASH = /^[0-9a-fA-F]{64}$/;

/** The id of a document's text, exactly as a client sends it (whitespace counts). */
export function documentIdOf(text: string): string {
  return `sha256:${sha256Hex(text)}`;
}

/** An id as clients and manifests write it, `sha256:<hex>` or bare hex in either case; undefined: not one. */
export function normalizeDocumentId(raw: string): string | undefined {
  // The spec's form, as every client of ours sends it: taken as it is, with no copy.
  if (DOCUMENT_ID.test(raw)) return raw;
  const hex = raw.startsWith('sha256:') ? raw.slice('sha256:'.length) : raw;
  return BARE_HASH.test(hex) ? `sha256:${hex.toLowerCase()}` : undefined;
}
