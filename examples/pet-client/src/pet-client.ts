import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { sseFrames } from './sse-frames.ts';

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

/** The data of a GraphQL answer (a JSON body, or one `next` event), or a PetClientError. */
function dataIn<TResult>(text: string, status: number): TResult {
  let body: GraphQLBody<TResult> | undefined;
  try {
    body = JSON.parse(text) as GraphQLBody<TResult>;
  } catch {
    // A proxy's HTML error page, say: no GraphQL answer to read a code from.
  }
  const [first] = body?.errors ?? [];
  if (first) throw new PetClientError(first.message, first.extensions?.code, status, body?.errors);
  if (status < 200 || status > 299 || body?.data == null) {
    throw new PetClientError(`HTTP ${status} without a GraphQL result`, undefined, status);
  }
  return body.data;
}

async function resultOf<TResult>(response: Response): Promise<TResult> {
  return dataIn<TResult>(await response.text(), response.status);
}

export interface SubscribeOptions {
  /** Aborting it ends the iteration (quietly) and closes the stream. */
  signal?: AbortSignal;
}

/**
 * Each `next` event's data until `complete`. A stream that breaks off any other way (the connection
 * cut, an oversized event) throws a PetClientError: subscribe again with the last cursor as `after`.
 */
async function* eventsOf<TResult>(response: Response, signal: AbortSignal | undefined): AsyncGenerator<TResult> {
  const { status } = response;
  try {
    for await (const frame of sseFrames(response.body as ReadableStream<Uint8Array>)) {
      if (frame.event === 'complete') return;
      if (frame.event === 'next') yield dataIn<TResult>(frame.data, status);
    }
  } catch (error) {
    if (signal?.aborted) return;
    if (error instanceof PetClientError) throw error;
    throw new PetClientError(`the stream broke off: ${(error as Error).message}`, undefined, status);
  }
  if (!signal?.aborted) throw new PetClientError('the stream ended without complete', undefined, status);
}

const isEventStream = (response: Response) =>
  response.headers.get('content-type')?.startsWith('text/event-stream') === true;

/**
 * A client that never sends document text: queries go by GET (cacheable, and safe to retry), mutations
 * by POST, subscriptions by POST over SSE, each as its `documentId`. The service runs them once the
 * manifest has been published.
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

  /**
   * Opens the subscription and resolves once the service has taken it (so a pet stored after that is
   * delivered), with its events' data to iterate; a refusal (401, 403, 429, 503) rejects with its
   * status before any event. POST, as a mutation: a stream is never cached, and the cursor in
   * `variables` stays out of URLs and access logs.
   */
  async function subscribe<TResult, TVariables>(
    document: TypedDocumentNode<TResult, TVariables>,
    variables: TVariables,
    { signal }: SubscribeOptions = {},
  ): Promise<AsyncIterableIterator<TResult>> {
    const { hash: documentId, operationType } = metaOf(document);
    if (operationType !== 'subscription') throw new TypeError(`subscribe takes a subscription, not a ${operationType}`);
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, Accept: 'text/event-stream', 'Content-Type': 'application/json' },
      body: JSON.stringify({ documentId, variables }),
      signal,
    });
    if (!isEventStream(response)) {
      await resultOf(response);
      throw new PetClientError(`HTTP ${response.status} without an event stream`, undefined, response.status);
    }
    const events = eventsOf<TResult>(response, signal);
    if (response.ok) return events;
    // The service answers a refusal in the format asked for: one `next` event with the error.
    await events.next().finally(() => events.return(undefined));
    throw new PetClientError(`HTTP ${response.status} without an error event`, undefined, response.status);
  }

  return { execute, subscribe };
}

export type PetClient = ReturnType<typeof createPetClient>;
