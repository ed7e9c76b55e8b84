import { type GraphQLAnswer, negotiateAsYoga } from './yoga-behaviour.ts';

export type { GraphQLAnswer, RegularMediaType } from './yoga-behaviour.ts';

export interface AcceptMemoryLimits {
  /** Distinct Accept headers remembered at once; the oldest makes room for a new one. */
  maxEntries: number;
  /** Longer headers are worked out each time: a client cannot grow the memory with its headers. */
  maxLength: number;
}

/**
 * What Yoga would answer a request with this Accept in (yoga-behaviour.ts), worked out once per
 * distinct header. The edge refuses 'none' itself, before anything runs, in constant size: Yoga would
 * run the operation, then answer 406 with an `Accept` header that repeats its four types once per
 * type the client sent. The fast path answers only the regular types.
 */
export function createGraphQLNegotiation({ maxEntries, maxLength }: AcceptMemoryLimits) {
  const remembered = new Map<string, GraphQLAnswer>();
  return {
    answerFor(accept: string | undefined): GraphQLAnswer {
      if (!accept || accept === '*/*') return negotiateAsYoga(accept);
      const known = remembered.get(accept);
      if (known !== undefined) return known;
      const answer = negotiateAsYoga(accept);
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

/** The process's one negotiation, shared by the 406 check and the fast path (request.ts). */
export const graphQLNegotiation = createGraphQLNegotiation({ maxEntries: 100, maxLength: 256 });
