import type { DocumentNode } from 'graphql';
import { maySendWholeDocuments, type TrustedDocumentsMode } from '../graphql/trusted-documents.ts';
import type { ValidatedDocuments } from '../graphql/validated-documents.ts';
import type { Exchange } from '../http/exchange.ts';
import { hasOrdinaryParams } from './yoga-behaviour.ts';

/** A request the fast path may answer: its document already found valid by Yoga. */
export interface FastRequest {
  document: DocumentNode;
  /** The published document's id it named, '' for a document sent whole. */
  documentId: string;
  operationName: string | undefined;
  variables: Readonly<Record<string, unknown>>;
}

export interface FastRequestOptions {
  documents: ValidatedDocuments;
  /** TRUSTED_DOCUMENTS: the gate's own rule decides who may send documents whole. */
  trustedDocuments: TrustedDocumentsMode;
  /** The text of a published document this instance has read already; undefined for any other id. */
  publishedText: (id: string) => string | undefined;
}

/**
 * Reads the parameters of a request the trusted-documents gate and Yoga's checks would pass
 * untouched: `query` from a key that may send documents whole, or the `documentId` of a published
 * document read already (in the spec's form), and a document Yoga has found valid. Anything else is
 * undefined, for Yoga to judge in its own words.
 */
export function createFastRequests({ documents, trustedDocuments, publishedText }: FastRequestOptions) {
  function textOf(exchange: Exchange, query: unknown, documentId: unknown): { text: string; id: string } | undefined {
    if (typeof documentId === 'string' && query == null) {
      const text = publishedText(documentId);
      return text === undefined ? undefined : { text, id: documentId };
    }
    if (typeof query === 'string' && documentId == null && maySendWholeDocuments(trustedDocuments, exchange)) {
      return { text: query, id: '' };
    }
    return undefined;
  }

  return function requestOf(exchange: Exchange, params: Record<string, unknown>): FastRequest | undefined {
    if (!hasOrdinaryParams(params)) return undefined;
    const sent = textOf(exchange, params.query, params.documentId);
    const document = sent && documents.get(sent.text);
    if (!sent || !document) return undefined;
    return {
      document,
      documentId: sent.id,
      operationName: (params.operationName as string | null) ?? undefined,
      variables: (params.variables ?? {}) as Readonly<Record<string, unknown>>,
    };
  };
}
