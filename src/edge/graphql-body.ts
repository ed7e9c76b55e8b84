export type GraphQLBody = { ok: true; body: unknown } | { ok: false; message: string };

function isJsonMediaType(contentType: string | undefined): boolean {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/**
 * A GraphQL request body as the edge hands it to Yoga: a JSON object already parsed (so Yoga does
 * not parse it again), or the bytes as they came, for other media types and for JSON values that
 * are not a non-empty object (Yoga refuses those in its own words). JSON that does not parse gets a
 * plain message here: Yoga would echo the SyntaxError object.
 */
export function parsedGraphQLBody(contentType: string | undefined, bytes: Buffer): GraphQLBody {
  if (!isJsonMediaType(contentType)) return { ok: true, body: bytes };
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, message: 'The request body is not valid JSON: send a JSON object with a "query"' };
  }
  // @whatwg-node/server takes a parsed body only when it has keys; anything else goes as bytes.
  const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  return { ok: true, body: isObject && Object.keys(parsed as object).length > 0 ? parsed : bytes };
}
