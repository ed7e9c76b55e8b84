import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { GraphQLError } from 'graphql';
import type { GraphQLParams, OnParamsEventPayload, Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { ExecutionExchange, ServerContext } from '../context.ts';
import { documentIdOf, normalizeDocumentId } from '../documents/document-id.ts';
import type { PublishedDocuments } from '../documents/published-documents.ts';
import type { DocumentRefusal, Metrics } from '../metrics/metrics.ts';
import { automaticPersistedQueryHash, createAutomaticPersistedQueries } from './automatic-persisted-queries.ts';
import { codedError, ErrorCode } from './errors.ts';
import { operationOf } from './operation-metrics.ts';

/** TRUSTED_DOCUMENTS: who may send documents of their own. Published ids are accepted in every mode. */
export type TrustedDocumentsMode = 'off' | 'log' | 'enforce';

/** Distinct operation names logged, and keys and reasons logged: bounded, as clients choose them. */
const MAX_LOGGED = 1_000;

// Request errors (`spec`); a key limited to published documents gets 403: another key would pass.
const refusals: Record<DocumentRefusal, () => GraphQLError> = {
  id_required: () =>
    codedError(
      'This API key may run only published documents: send the "documentId" (sha256:<hex>) of a published document instead of a "query"',
      ErrorCode.PERSISTED_QUERY_ID_REQUIRED,
      { status: 403, spec: true },
    ),
  not_in_list: () =>
    codedError(
      'No published document has this id: ids are "sha256:" and the 64 hex digits of the SHA-256 of a document published with `npm run documents -- publish`',
      ErrorCode.PERSISTED_QUERY_NOT_IN_LIST,
      { status: 400, spec: true },
    ),
  document_and_id: () =>
    codedError(
      'Send either a "query" or a published document\'s id ("documentId" or extensions.persistedQuery), not both',
      ErrorCode.CANNOT_SEND_PQ_ID_AND_BODY,
      { status: 400, spec: true },
    ),
};

/**
 * The trusted-documents gate's refusals and warnings: each counted every time, logged once per key
 * and reason (refusals) or per operation name (documents `enforce` would refuse), within a bound.
 */
function createDocumentRefusals(options: { documents: PublishedDocuments; metrics: Metrics; logger: Logger }) {
  const { documents, metrics, logger } = options;
  const loggedOperations = new Set<string>();
  const loggedRefusals = new Set<string>();

  function refuse(exchange: ExecutionExchange, reason: DocumentRefusal): GraphQLError {
    metrics.countDocumentRefused(reason);
    const once = `${exchange.keyId} ${reason}`;
    if (!loggedRefusals.has(once) && loggedRefusals.size < MAX_LOGGED) {
      loggedRefusals.add(once);
      logger.info(
        { keyId: exchange.keyId, reason, reqId: exchange.id },
        `refused a GraphQL request of ${exchange.keyId}: ${reason} (logged once per key and reason; graphql_documents_refused_total counts them all)`,
      );
    }
    return refusals[reason]();
  }

  function warnUntrusted(exchange: ExecutionExchange, text: string, name: string | undefined): void {
    const operation = name ?? 'anonymous';
    if (loggedOperations.has(operation) || loggedOperations.size >= MAX_LOGGED) return;
    loggedOperations.add(operation);
    const published = documents.has(documentIdOf(text));
    logger.warn(
      { operation, keyId: exchange.keyId, reqId: exchange.id, published },
      published
        ? `operation ${operation} was sent whole by ${exchange.keyId}: TRUSTED_DOCUMENTS=enforce would refuse it; its text is published, so the client only has to send its id`
        : `operation ${operation} was sent whole by ${exchange.keyId} and is not published: TRUSTED_DOCUMENTS=enforce would refuse it`,
    );
  }

  return { refuse, warnUntrusted };
}

type DocumentRefusals = ReturnType<typeof createDocumentRefusals>;

/** Not a well-formed GraphQL-over-HTTP request, so 400 whatever the media type (as Yoga answers it). */
const nothingSent = () => {
  const message = 'Send a GraphQL document as "query", or a published document\'s id as "documentId"';
  return codedError(message, ErrorCode.BAD_REQUEST, { status: 400 });
};

const notAString = () =>
  codedError('"documentId" must be a string: "sha256:" and 64 hex digits', ErrorCode.BAD_REQUEST, { status: 400 });

/** The gate's one rule for documents sent whole (the fast path asks it too): mode `off`, or a key allowed them. */
export const maySendWholeDocuments = (mode: TrustedDocumentsMode, exchange: ExecutionExchange): boolean =>
  mode === 'off' || exchange.arbitraryDocuments;

/**
 * Who may register texts by Apollo's automatic persisted queries: whoever may send documents whole,
 * and, under `log`, every key (what it registers is a document sent whole, counted and logged as such).
 */
const mayRegister = (mode: TrustedDocumentsMode, exchange: ExecutionExchange): boolean =>
  mode === 'log' || maySendWholeDocuments(mode, exchange);

type Params = GraphQLParams & { documentId?: unknown };

/** What a request names instead of a document, and whether by Apollo's persisted-query extension. */
interface SentId {
  sent: unknown;
  automatic: boolean;
}

/**
 * The id a request names: `documentId` in a POST body, in a GET's query string (Yoga's GET parser
 * keeps only the four standard parameters), or Apollo's `extensions.persistedQuery`.
 */
function sentDocumentId(params: Params, request: Request): SentId | undefined {
  if (params.documentId != null) return { sent: params.documentId, automatic: false };
  if (request.method === 'GET' && request.url.includes('documentId=')) {
    const sent = new URL(request.url).searchParams.get('documentId') || undefined;
    return sent === undefined ? undefined : { sent, automatic: false };
  }
  const hash = automaticPersistedQueryHash(params);
  return hash === undefined ? undefined : { sent: hash, automatic: true };
}

/** The library swaps the id the gate accepted for its published text; the gate has decided who may send what. */
function useDocumentSwap(documents: PublishedDocuments, refuse: DocumentRefusals['refuse']): Plugin<ServerContext> {
  return usePersistedOperations<ServerContext>({
    allowArbitraryOperations: true,
    extractPersistedOperationId: (_params, _request, context) =>
      (context as unknown as ServerContext).exchange.documentId || null,
    getPersistedOperation: (id) => documents.lookup(id),
    customErrors: {
      keyNotFound: nothingSent,
      // Removed between the gate's check and the read of its text.
      notFound: ({ context }) => refuse((context as unknown as ServerContext).exchange, 'not_in_list'),
    },
  });
}

/**
 * Trusted documents, before parsing: a published id runs its document (the library swaps it in); a
 * document sent whole by a key that may not is refused under `enforce`, logged and counted under
 * `log`. Apollo's APQ from keys that may register is served here too, so what it runs meets every
 * later rule as the same text sent whole. REST never gets here: its documents are the server's own.
 */
export function useTrustedDocuments(options: {
  mode: TrustedDocumentsMode;
  documents: PublishedDocuments;
  metrics: Metrics;
  logger: Logger;
}): Plugin<ServerContext>[] {
  const { mode, documents, metrics } = options;
  const { refuse, warnUntrusted } = createDocumentRefusals(options);
  /** Documents sent whole under `log` by keys that `enforce` would refuse: their text, for the log line. */
  const untrusted = new WeakMap<ExecutionExchange, string>();

  const registered = createAutomaticPersistedQueries();

  /** A published id runs its document; other ids are refused, unless Apollo's APQ may register them. */
  function byId(payload: OnParamsEventPayload<object>, exchange: ExecutionExchange, { sent, automatic }: SentId) {
    const params = payload.params as Params;
    // A published id as the spec writes it (every client of ours) needs no normalising, nor its regex.
    const id = typeof sent !== 'string' ? undefined : documents.has(sent) ? sent : normalizeDocumentId(sent);
    const published = id !== undefined && documents.has(id);
    if (automatic && !(published && params.query == null) && mayRegister(mode, exchange)) {
      return registered.serve(payload, exchange).then((text) => {
        if (text !== undefined && !maySendWholeDocuments(mode, exchange)) untrusted.set(exchange, text);
      });
    }
    if (params.query != null) throw refuse(exchange, 'document_and_id');
    if (typeof sent !== 'string') throw notAString();
    if (!published) throw refuse(exchange, 'not_in_list');
    exchange.documentId = id;
  }

  const gate: Plugin<ServerContext> = {
    onParams(payload) {
      const { params, request, context } = payload;
      // Yoga's params hooks get the server context the edge passed (typed {} in its plugin type).
      const { exchange } = context as unknown as ServerContext;
      const sent = sentDocumentId(params as Params, request);
      if (sent) return byId(payload, exchange, sent);
      if (typeof params.query !== 'string' || maySendWholeDocuments(mode, exchange)) return;
      if (mode === 'enforce') throw refuse(exchange, 'id_required');
      untrusted.set(exchange, params.query);
    },
    onExecute({ args }) {
      const { exchange } = args.contextValue as ServerContext;
      const text = untrusted.get(exchange);
      if (text !== undefined) {
        const { name, type } = operationOf(args.document, args.operationName);
        metrics.countUntrustedOperation(name, type);
        warnUntrusted(exchange, text, name);
      }
      // A text registered by this request is kept only if its operation executes.
      return registered.keepOnceExecuted(exchange);
    },
  };

  return [gate, useDocumentSwap(documents, refuse)];
}
