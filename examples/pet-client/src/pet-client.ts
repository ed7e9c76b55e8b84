import type { TypedDocumentNode } from '@graphql-typed-document-node/core';

export interface PetClientOptions {
  /** The service's GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql. */
  url: string | URL;
  /** A bearer key, e.g. one issued with `npm run keys -- create NAME`. */
  apiKey: string;
  /** Any fetch: tests and proxies may pass their own. */
  fetch?: typeof globalThis.fetch;
}

/** What the client preset leaves of a document in replaceDocumentWithHash mode (see codegen.ts). */
interface PersistedDocumentMeta {
  hash: string;
  operationType: 'query' | 'mutation' | 'subscription';
}

export interface GraphQLErrorEntry {
  message: string;
  extensions?: { code?: string; [key: string]: unknown };
}

/** A refused or failed operation: the first GraphQL error's code, or none when the answer was not GraphQL. */
export class PetClientError extends Error {
  override name = 'PetClientError';
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly status: number,
    readonly errors: readonly GraphQLErrorEntry[] = [],
  ) {
    super(code ? `${code}: ${message}` : message);
  }
}

function metaOf(document: TypedDocumentNode<unknown, never>): PersistedDocumentMeta {
  const meta = (document as { __meta__?: Partial<PersistedDocumentMeta> }).__meta__;
  if (!meta?.hash?.startsWith('sha256:') || !meta.operationType) {
    throw new TypeError('the document has no sha256 id: generate it with codegen.ts (persistedDocuments, sha256)');
  }
  return meta as PersistedDocumentMeta;
}

interface GraphQLBody<TResult> {
  data?: TResult | null;
  errors?: GraphQLErrorEntry[];
}

async function resultOf<TResult>(response: Response): Promise<TResult> {
  const text = await response.text();
  let body: GraphQLBody<TResult> | undefined;
  try {
    body = JSON.parse(text) as GraphQLBody<TResult>;
  } catch {
    // A proxy's HTML error page, say: no GraphQL answer to read a code from.
  }
  const [first] = body?.errors ?? [];
  if (first) throw new PetClientError(first.message, first.extensions?.code, response.status, body?.errors);
  if (!response.ok || body?.data == null) {
    throw new PetClientError(`HTTP ${response.status} without a GraphQL result`, undefined, response.status);
  }
  return body.data;
}

/**
 * A client that never sends document text: queries go by GET (cacheable, and safe to retry), mutations
 * by POST, each as its `documentId`. The service runs them once the manifest has been published.
 */
export function createPetClient({ url, apiKey, fetch = globalThis.fetch }: PetClientOptions) {
  const headers = { Accept: 'application/graphql-response+json', Authorization: `Bearer ${apiKey}` };

  async function execute<TResult, TVariables>(
    document: TypedDocumentNode<TResult, TVariables>,
    variables: TVariables,
  ): Promise<TResult> {
    const { hash: documentId, operationType } = metaOf(document);
    if (operationType === 'query') {
      const target = new URL(url);
      target.searchParams.set('documentId', documentId);
      target.searchParams.set('variables', JSON.stringify(variables ?? {}));
      return resultOf<TResult>(await fetch(target, { headers }));
    }
    const body = JSON.stringify({ documentId, variables });
    const init = { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body };
    return resultOf<TResult>(await fetch(url, init));
  }

  return { execute };
}

export type PetClient = ReturnType<typeof createPetClient>;
