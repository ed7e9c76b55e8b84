/** The media types /graphql speaks, decided as Yoga decides them, so the edge can refuse the rest first. */

/** Yoga's regular result processor's media types, in its order. */
export type RegularMediaType = 'application/graphql-response+json' | 'application/json';
/** What /graphql answers in, by Accept: a regular JSON type, a stream (Yoga's), or nothing (406). */
export type GraphQLAnswer = RegularMediaType | 'stream' | 'none';

/** Yoga's result processors' media types, split once: type, subtype, and what a match means. */
const REGULAR: readonly (readonly [string, string, RegularMediaType])[] = [
  ['application', 'graphql-response+json', 'application/graphql-response+json'],
  ['application', 'json', 'application/json'],
];
const STREAMS: readonly (readonly [string, string])[] = [
  ['text', 'event-stream'],
  ['multipart', 'mixed'],
];

/** What a 406 says we answer in: one fixed list (Yoga's processors in its order), whatever the client asked for. */
export const ACCEPTED_MEDIA_TYPES = [...STREAMS, ...REGULAR].map(([type, subtype]) => `${type}/${subtype}`).join(', ');

const matches = (
  type: string | undefined,
  subtype: string | undefined,
  [candidateType, candidateSubtype]: readonly string[],
) => (type === '*' || type === candidateType) && (subtype === '*' || subtype === candidateSubtype);

/**
 * Yoga's negotiation (useResultProcessors, accept.js): the Accept list without spaces, lower-cased,
 * each type with a charset other than utf-8 dropped, q-values ignored, a `*` on the client's side
 * matching anything; processors tried streams first, the list read backwards, and the last match wins.
 * So the regular processor wins whenever any entry matches it, with the first such entry's last match;
 * a stream only when nothing regular matches.
 */
function negotiate(accept: string): GraphQLAnswer {
  let answer: GraphQLAnswer = 'none';
  for (const entry of accept.replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [type, subtype] = mediaType.split('/');
    let regular: RegularMediaType | undefined;
    for (const candidate of REGULAR) if (matches(type, subtype, candidate)) regular = candidate[2];
    if (regular) return regular;
    if (answer === 'none' && STREAMS.some((candidate) => matches(type, subtype, candidate))) answer = 'stream';
  }
  return answer;
}

export interface AcceptMemoryLimits {
  /** Distinct Accept headers remembered at once; the oldest makes room for a new one. */
  maxEntries: number;
  /** Longer headers are worked out each time: a client cannot grow the memory with its headers. */
  maxLength: number;
}

/**
 * What Yoga would answer a request with this Accept in, worked out once per distinct header. The
 * edge refuses 'none' itself, before anything runs, in constant size: Yoga would run the operation,
 * then answer 406 with an `Accept` header that repeats its four types once per type the client sent.
 * The fast path answers only the regular types.
 */
export function createGraphQLNegotiation({ maxEntries, maxLength }: AcceptMemoryLimits) {
  const remembered = new Map<string, GraphQLAnswer>();
  return {
    answerFor(accept: string | undefined): GraphQLAnswer {
      // Yoga reads an absent or empty Accept as */*, whose last match is application/json.
      if (!accept || accept === '*/*') return 'application/json';
      const known = remembered.get(accept);
      if (known !== undefined) return known;
      const answer = negotiate(accept);
      if (accept.length <= maxLength) {
        if (remembered.size >= maxEntries) remembered.delete(remembered.keys().next().value as string);
        remembered.set(accept, answer);
      }
      return answer;
    },
    /** How many headers it remembers now. */
    get remembered(): number {
      return remembered.size;
    },
  };
}

/** The process's one negotiation, shared by the 406 check and the fast path (graphql-request.ts). */
export const graphQLNegotiation = createGraphQLNegotiation({ maxEntries: 100, maxLength: 256 });

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
