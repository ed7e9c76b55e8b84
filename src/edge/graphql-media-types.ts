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
