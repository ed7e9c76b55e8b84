import { createGraphQLError } from '@graphql-tools/utils';
import type { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import type { ExecutionExchange } from '../context.ts';
import { documentIdOf } from '../documents/document-id.ts';
import type { PublishedDocuments } from '../documents/published-documents.ts';
import type { DocumentRefusal, Metrics } from '../metrics/metrics.ts';
import { ErrorCode } from './errors.ts';

/** Distinct operation names logged, and keys and reasons logged: bounded, as clients choose them. */
const MAX_LOGGED = 1_000;

/**
 * Request errors, so GraphQL-over-HTTP's statuses: the status with application/graphql-response+json,
 * 200 with application/json (`spec`). A key limited to published documents gets 403: another key, or
 * publishing, would be let through.
 */
const refusals: Record<DocumentRefusal, () => GraphQLError> = {
  id_required: () =>
    createGraphQLError(
      'This API key may run only published documents: send the "documentId" (sha256:<hex>) of a published document instead of a "query"',
      { extensions: { code: ErrorCode.PERSISTED_QUERY_ID_REQUIRED, http: { status: 403, spec: true } } },
    ),
  not_in_list: () =>
    createGraphQLError(
      'No published document has this id: ids are "sha256:" and the 64 hex digits of the SHA-256 of a document published with `npm run documents -- publish`',
      { extensions: { code: ErrorCode.PERSISTED_QUERY_NOT_IN_LIST, http: { status: 400, spec: true } } },
    ),
  document_and_id: () =>
    createGraphQLError(
      'Send either a "query" or a published document\'s id ("documentId" or extensions.persistedQuery), not both',
      {
        extensions: { code: ErrorCode.CANNOT_SEND_PQ_ID_AND_BODY, http: { status: 400, spec: true } },
      },
    ),
};

/**
 * The trusted-documents gate's refusals and warnings: each counted every time, logged once per key
 * and reason (refusals) or per operation name (documents `enforce` would refuse), within a bound.
 */
export function createDocumentRefusals(options: { documents: PublishedDocuments; metrics: Metrics; logger: Logger }) {
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

export type DocumentRefusals = ReturnType<typeof createDocumentRefusals>;
