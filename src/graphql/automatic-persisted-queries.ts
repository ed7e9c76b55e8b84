import { type APQStore, createInMemoryAPQStore, useAPQ } from '@graphql-yoga/plugin-apq';
import type { GraphQLParams, OnParamsEventPayload } from 'graphql-yoga';
import { sha256Hex } from '../auth/api-key-store.ts';
import { codedError, ErrorCode } from './errors.ts';

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

/**
 * The library keeps a text as soon as its hash matches, before it is parsed; a store that keeps
 * nothing there lets a text be kept only once its operation has executed (keepOnceExecuted), so
 * texts that would never run cannot push good ones out.
 */
const lookupOnly = (store: APQStore): APQStore => ({ get: (hash) => store.get(hash), set: () => undefined });

/**
 * GraphQL's mark of an operation that executed: a result with `data`. A request error (a document,
 * scope, list-size or price refusal, or variables that do not coerce) has none.
 */
const executed = (result: unknown): boolean => typeof result === 'object' && result !== null && 'data' in result;

/** The library's own message is its code in camel case; a client should learn what to fix. */
const mismatch = () =>
  codedError(
    'extensions.persistedQuery.sha256Hash is not the SHA-256 of this "query": send the lower-case hex SHA-256 of the exact text (nothing was registered or run)',
    ErrorCode.PERSISTED_QUERY_MISMATCH,
    { status: 400 },
  );

/** Apollo's own words, which older links match on instead of the code; 404 whatever the Accept. */
const notFound = () => codedError('PersistedQueryNotFound', ErrorCode.PERSISTED_QUERY_NOT_FOUND, { status: 404 });

/** The library's two refusals, with our codes (errors.ts lists every code we answer). */
function ours(error: unknown): unknown {
  const code = (error as { extensions?: { code?: unknown } } | null)?.extensions?.code;
  if (code === ErrorCode.PERSISTED_QUERY_MISMATCH) return mismatch();
  return code === ErrorCode.PERSISTED_QUERY_NOT_FOUND ? notFound() : error;
}

/** The library ignores an extension it cannot read; Apollo Server refuses it, and so do we (nothing runs). */
const malformed = () =>
  codedError(
    'extensions.persistedQuery must be { "version": 1, "sha256Hash": the lower-case hex SHA-256 of the query } (nothing was registered or run)',
    ErrorCode.BAD_REQUEST,
    { status: 400 },
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

/** Envelop's onExecute result whose onExecuteDone gets the operation's final result. */
type AfterExecution = { onExecuteDone(payload: { result: unknown }): void };

/** One instance's registered texts (created once per Yoga: nothing is shared between instances). */
export function createAutomaticPersistedQueries(limits = APQ_LIMITS) {
  const store = createBoundedStore(limits);
  // node's hash answers at once, where the library's default waits for WebCrypto.
  const plugin = useAPQ({ store: lookupOnly(store), hash: sha256Hex });
  const onParams = plugin.onParams as (payload: OnParamsEventPayload<object>) => Promise<void>;
  /** Texts sent with their hash and checked, by request, until their operation has executed. */
  const pending = new WeakMap<object, { hash: string; text: string }>();
  return {
    /**
     * Apollo's protocol for a request with extensions.persistedQuery: a hash alone gets its text (or
     * 404 PERSISTED_QUERY_NOT_FOUND, for the link to resend it); a text with its hash is checked (400
     * PERSISTED_QUERY_MISMATCH) and waits for keepOnceExecuted. Resolves to the text the request runs;
     * a `query` that is not a string is left for Yoga's own 400.
     */
    async serve(payload: OnParamsEventPayload<object>, request: object): Promise<string | undefined> {
      let { params } = payload;
      const sent = params.query;
      // Never hashed (node's hash throws on it): Yoga's parameter check, after this hook, answers 400.
      if (sent != null && typeof sent !== 'string') return undefined;
      const setParams = (next: GraphQLParams) => {
        params = next;
        payload.setParams(next);
      };
      try {
        await onParams({ ...payload, setParams });
      } catch (error) {
        throw ours(error);
      }
      // The library returned, so a text sent with a hash matched it.
      const hash = automaticPersistedQueryHash(params);
      if (sent != null && hash !== undefined) pending.set(request, { hash, text: sent });
      return params.query;
    },
    /** For onExecute (after parsing, validation and every refusal): keeps the text if its operation executes. */
    keepOnceExecuted(request: object): AfterExecution | undefined {
      const registration = pending.get(request);
      if (!registration) return undefined;
      pending.delete(request);
      return {
        onExecuteDone({ result }) {
          if (executed(result)) store.set(registration.hash, registration.text);
        },
      };
    },
  };
}
