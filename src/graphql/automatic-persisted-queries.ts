import { createGraphQLError } from '@graphql-tools/utils';
import { type APQStore, createInMemoryAPQStore, useAPQ } from '@graphql-yoga/plugin-apq';
import type { GraphQLParams, OnParamsEventPayload } from 'graphql-yoga';
import { sha256Hex } from '../auth/api-key-store.ts';
import { ErrorCode } from './errors.ts';

/**
 * What one instance keeps of the texts clients register: at most `texts` of them, least recently
 * used first out, none longer than `characters` (so memory stays under their product, whatever
 * clients send). A longer text runs but is not kept: its hash alone is never found.
 */
export const APQ_LIMITS = { texts: 1_000, characters: 16_384 } as const;

/** The library's LRU store (no expiry: the count bounds it), refusing texts over the size limit. */
function createBoundedStore(limits: { texts: number; characters: number }): APQStore {
  const lru = createInMemoryAPQStore({ max: limits.texts, ttl: 0 });
  return {
    get: (hash) => lru.get(hash),
    set: (hash, text) => (text.length <= limits.characters ? lru.set(hash, text) : undefined),
  };
}

/** The library's own message is its code in camel case; a client should learn what to fix. */
const mismatch = () =>
  createGraphQLError(
    'extensions.persistedQuery.sha256Hash is not the SHA-256 of this "query": send the lower-case hex SHA-256 of the exact text (nothing was registered or run)',
    { extensions: { code: 'PERSISTED_QUERY_MISMATCH', http: { status: 400 } } },
  );

const isMismatch = (error: unknown) =>
  (error as { extensions?: { code?: unknown } } | null)?.extensions?.code === 'PERSISTED_QUERY_MISMATCH';

/** The library ignores an extension it cannot read; Apollo Server refuses it, and so do we (nothing runs). */
const malformed = () =>
  createGraphQLError(
    'extensions.persistedQuery must be { "version": 1, "sha256Hash": the lower-case hex SHA-256 of the query } (nothing was registered or run)',
    { extensions: { code: ErrorCode.BAD_REQUEST, http: { status: 400 } } },
  );

/** The hash in Apollo's extension, as Apollo's link sends it; undefined without one; 400 for any other shape. */
export function automaticPersistedQueryHash(params: GraphQLParams): string | undefined {
  const extensions = params.extensions as Record<string, unknown> | null | undefined;
  const persisted = typeof extensions === 'object' ? extensions?.persistedQuery : undefined;
  if (persisted == null) return undefined;
  const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
  if (version !== 1 || typeof sha256Hash !== 'string') throw malformed();
  return sha256Hash;
}

export interface AutomaticPersistedQueries {
  /**
   * Apollo's protocol for one request carrying extensions.persistedQuery, by
   * @graphql-yoga/plugin-apq: a hash alone gets its registered text (or PERSISTED_QUERY_NOT_FOUND,
   * 404, for Apollo's link to resend the text); a text with its hash is checked (400
   * PERSISTED_QUERY_MISMATCH) and kept. Resolves to the text the request runs, set in its params;
   * a `query` that is not a string is left untouched, for Yoga's own 400.
   */
  serve(payload: OnParamsEventPayload<object>): Promise<string | undefined>;
}

/** One instance's registered texts (created once per Yoga: nothing is shared between instances). */
export function createAutomaticPersistedQueries(limits = APQ_LIMITS): AutomaticPersistedQueries {
  // node's hash answers at once, where the library's default waits for WebCrypto.
  const plugin = useAPQ({ store: createBoundedStore(limits), hash: sha256Hex });
  const onParams = plugin.onParams as (payload: OnParamsEventPayload<object>) => Promise<void>;
  return {
    async serve(payload) {
      let { params } = payload;
      // Never hashed (node's hash throws on it): Yoga's parameter check, after this hook, answers 400.
      if (params.query != null && typeof params.query !== 'string') return undefined;
      const setParams = (next: GraphQLParams) => {
        params = next;
        payload.setParams(next);
      };
      try {
        await onParams({ ...payload, setParams });
      } catch (error) {
        throw isMismatch(error) ? mismatch() : error;
      }
      return params.query;
    },
  };
}
