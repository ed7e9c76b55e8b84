import { sha256Hex } from '../auth/api-key-store.ts';

/**
 * GraphQL-over-HTTP's SHA256 hex document identifier: `sha256:` and the lower-case hex SHA-256 of the
 * document's source text as UTF-8. The one form ids are stored, counted and logged in.
 */
export const DOCUMENT_ID = /^sha256:[0-9a-f]{64}$/;

const BARE_HASH = /^[0-9a-fA-F]{64}$/;

/** The id of a document's text, exactly as a client sends it (whitespace counts). */
export function documentIdOf(text: string): string {
  return `sha256:${sha256Hex(text)}`;
}

/**
 * An id as clients and manifests write it: `sha256:<hex>` (the spec, codegen with a prefix) or the
 * bare hex (Apollo's `sha256Hash`, codegen's manifest keys), in either case. Undefined: not one.
 */
export function normalizeDocumentId(raw: string): string | undefined {
  // The spec's form, as every client of ours sends it: taken as it is, with no copy.
  if (DOCUMENT_ID.test(raw)) return raw;
  const hex = raw.startsWith('sha256:') ? raw.slice('sha256:'.length) : raw;
  return BARE_HASH.test(hex) ? `sha256:${hex.toLowerCase()}` : undefined;
}
