import type { OutgoingHttpHeaders } from 'node:http';
import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import { type FetchAPI, processRegularResult } from 'graphql-yoga';
import type { CompiledOperation, DirectExecution } from '../graphql/direct-execution.ts';
import type { ValidatedDocuments } from '../graphql/validated-documents.ts';
import type { RequestScope } from '../http/request-scope.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { RegularMediaType } from './graphql-media-types.ts';

const BODY_KEYS = new Set(['query', 'documentId', 'variables', 'operationName']);

/** What Yoga's result processor makes of a result: captured instead of a fetch Response. */
class CapturedResponse {
  constructor(
    readonly body: string,
    readonly init: { status?: number; headers?: Record<string, string> },
  ) {}
}
const CAPTURE = { Response: CapturedResponse } as unknown as FetchAPI;

/** How the request came (its method) and how Yoga would answer it (its regular media type). */
interface Exchange {
  method: 'GET' | 'POST';
  mediaType: RegularMediaType;
}

interface FastRequest {
  document: DocumentNode;
  /** The published document's id it named, '' for a document sent whole. */
  documentId: string;
  operationName: string | undefined;
  variables: Readonly<Record<string, unknown>>;
}

export interface GraphQLFastPathOptions {
  execution: DirectExecution;
  documents: ValidatedDocuments;
  metrics: Metrics;
  /** Whether this request's key may send documents of its own (the trusted-documents gate would let it pass untouched). */
  mayRunWholeDocuments: (scope: RequestScope) => boolean;
  /** The text of a published document this instance has read already; undefined for any other id. */
  publishedText: (id: string) => string | undefined;
}

/**
 * GraphQL requests that Yoga would answer the ordinary way, answered without it: a POST of a JSON
 * body, or a GET of a query, with `query` (from a key the trusted-documents gate lets through
 * untouched) or the `documentId` of a published document this instance has read already, with
 * `variables` and `operationName`, and nothing else; its document found valid by Yoga already;
 * asking for a JSON answer. They run through the direct execution (same context, executor and rules
 * as Yoga's envelop) and are answered by Yoga's own result processor (status, headers and body).
 * Anything else returns false, and Yoga answers it: a first sight of a document, errors in the
 * request, ids not read yet or not in the spec's form, extensions, mutations by GET, streaming.
 * `test/graphql-fast-path.test.ts` holds its answers to Yoga's.
 */
export function createGraphQLFastPath(options: GraphQLFastPathOptions) {
  const { execution, documents, metrics, mayRunWholeDocuments, publishedText } = options;
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledOperation | null>>();

  /** The text a body sends whole, or names by a published id in the spec's form; undefined for Yoga to judge. */
  function textOf(scope: RequestScope, query: unknown, documentId: unknown): { text: string; id: string } | undefined {
    if (typeof documentId === 'string' && query == null) {
      const text = publishedText(documentId);
      return text === undefined ? undefined : { text, id: documentId };
    }
    if (typeof query === 'string' && documentId == null && mayRunWholeDocuments(scope)) return { text: query, id: '' };
    return undefined;
  }

  /** The parts of a body the fast path takes, or undefined for anything Yoga should judge. */
  function requestOf(scope: RequestScope, body: Record<string, unknown>): FastRequest | undefined {
    for (const key in body) if (!BODY_KEYS.has(key) && body[key] != null) return undefined;
    const { query, documentId, variables, operationName } = body;
    if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
    if (operationName != null && typeof operationName !== 'string') return undefined;
    const sent = textOf(scope, query, documentId);
    const document = sent && documents.get(sent.text);
    if (!sent || !document) return undefined;
    return {
      document,
      documentId: sent.id,
      operationName: operationName ?? undefined,
      variables: (variables ?? {}) as Readonly<Record<string, unknown>>,
    };
  }

  /** A document graphql-jit cannot compile is left to Yoga, whose executor answers it in its own words. */
  function compiledOrNull(document: DocumentNode, operationName: string | undefined): CompiledOperation | null {
    try {
      return execution.compile(document, operationName);
    } catch {
      return null;
    }
  }

  /** One compiled operation per document and operation name; null for one the fast path leaves to Yoga. */
  function operationOf({ document, operationName }: FastRequest): CompiledOperation | null {
    let byName = compiled.get(document);
    if (!byName) {
      byName = new Map();
      compiled.set(document, byName);
    }
    const key = operationName ?? '';
    let operation = byName.get(key);
    if (operation === undefined) {
      const selected = getOperationAST(document, operationName);
      // No such operation, or several without a name: Yoga says so. Subscriptions stream.
      operation = selected && selected.operation !== 'subscription' ? compiledOrNull(document, operationName) : null;
      byName.set(key, operation);
    }
    return operation;
  }

  function respond(scope: RequestScope, result: ExecutionResult, mediaType: RegularMediaType): void {
    const { body, init } = processRegularResult(result, CAPTURE, mediaType) as unknown as CapturedResponse;
    const headers: OutgoingHttpHeaders = { ...init.headers, 'Content-Length': Buffer.byteLength(body) };
    scope.res.writeHead(init.status ?? 200, headers);
    scope.res.end(body);
  }

  /**
   * Answers the request and returns true (or a promise of it), or returns false without touching
   * it, for Yoga to answer. `params` is a POST's parsed body, or a GET's query string as Yoga reads it;
   * `mediaType` is what Yoga would answer in (graphql-media-types.ts: the edge negotiated it already).
   */
  function tryFastPath(scope: RequestScope, params: unknown, exchange: Exchange): false | Promise<true> {
    if (typeof params !== 'object' || params === null) return false;
    const { method, mediaType } = exchange;
    const request = requestOf(scope, params as Record<string, unknown>);
    const operation = request && operationOf(request);
    // Yoga refuses a mutation over GET (405), and answers it.
    if (!request || !operation || (method === 'GET' && operation.type !== 'query')) return false;
    // As the trusted-documents gate does: metrics and the access log name the document it ran by.
    scope.documentId = request.documentId;
    metrics.countFastPathRequest();
    return Promise.resolve(execution.run(operation, scope, request.variables)).then((result) => {
      metrics.countGraphQLOperation(
        operation.name,
        operation.type,
        result.errors?.length ? 'error' : 'success',
        scope.documentId,
      );
      // As @envelop/graphql-jit does: Yoga's processor serialises with the operation's own stringify.
      respond(scope, Object.assign(result, { stringify: operation.stringify }), mediaType);
      return true as const;
    });
  }

  return {
    /** A POST: only a body Yoga would parse as JSON (its isPOSTJsonRequest: application/json). */
    post(scope: RequestScope, body: unknown, mediaType: RegularMediaType): false | Promise<true> {
      const contentType = scope.req.headers['content-type']?.split(',')[0];
      if (contentType !== 'application/json' && !contentType?.startsWith('application/json;')) return false;
      return tryFastPath(scope, body, { method: 'POST', mediaType });
    },
    /** A GET: its query string as Yoga reads it (graphql-url-params.ts); `extensions` leave it to Yoga. */
    get(scope: RequestScope, params: Record<string, unknown>, mediaType: RegularMediaType): false | Promise<true> {
      return tryFastPath(scope, params, { method: 'GET', mediaType });
    },
  };
}

export type GraphQLFastPath = ReturnType<typeof createGraphQLFastPath>;
