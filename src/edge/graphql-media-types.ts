/** The media types /graphql speaks, decided as Yoga decides them, so the edge can refuse the rest first. */

/** Every media type Yoga's result processors answer in: streams first, then the regular JSON ones. */
const ANSWERED = ['text/event-stream', 'multipart/mixed', 'application/graphql-response+json', 'application/json'];

/** What a 406 says we answer in: one fixed list, whatever the client asked for. */
export const ACCEPTED_MEDIA_TYPES = ANSWERED.join(', ');

/**
 * Whether Yoga would find a result processor for this Accept header (its accept.js: spaces removed,
 * lower-cased, types with a charset other than utf-8 skipped, q-values ignored, a `*` on the client's
 * side matching anything). When none matches, Yoga runs the operation and then answers 406 with an
 * `Accept` header that repeats its four types once per type the client sent: an answer that grows
 * with the request. The edge answers such a request itself, before anything runs, in constant size.
 */
export function acceptsGraphQLAnswer(accept: string | undefined): boolean {
  if (!accept) return true;
  for (const entry of accept.replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [type, subtype] = mediaType.split('/');
    for (const answered of ANSWERED) {
      const [answeredType, answeredSubtype] = answered.split('/');
      if ((type === '*' || type === answeredType) && (subtype === '*' || subtype === answeredSubtype)) return true;
    }
  }
  return false;
}

/** What Yoga parses a POST body as, by Content-Type; multipart is off (yoga.ts), so not that. */
const POST_BODIES = new Map([
  ['application/json', 'json'],
  ['application/graphql+json', 'json'],
  ['application/x-www-form-urlencoded', 'form'],
  ['application/graphql', 'graphql'],
] as const);
export type PostBody = 'json' | 'form' | 'graphql';

/** POST bodies Yoga reads, for the edge's 415. */
export const POSTED_MEDIA_TYPES = [...POST_BODIES.keys()].join(', ');

/**
 * How Yoga reads a POST body with this Content-Type (its isContentTypeMatch: the first of a list, exactly,
 * parameters aside), or undefined when it reads none: Yoga's 415 then has no body and no code.
 */
export function postBodyOf(contentType: string | undefined): PostBody | undefined {
  const first = contentType?.split(',')[0] ?? '';
  const semicolon = first.indexOf(';');
  const mediaType = semicolon === -1 ? first : first.slice(0, semicolon);
  // Yoga compares the exact text: `Application/JSON` or `application/json ;` match nothing.
  return (POST_BODIES as Map<string, PostBody>).get(mediaType);
}
