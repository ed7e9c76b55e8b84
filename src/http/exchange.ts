import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Scopes } from '../auth/scopes.ts';
import { setEarlyHeader } from './edge-response.ts';
import type { Face } from './send-json.ts';
import type { StreamEnd } from './stream-outcomes.ts';

const NO_SCOPES: Scopes = new Set();

/** What an exchange that carried a stream delivered, for its access-log line at the end. */
export interface StreamRecord {
  events: number;
  /** Undefined while open; a response that closes before the stream ended itself was left by its client. */
  end: StreamEnd | undefined;
}

/**
 * One HTTP exchange (a request and its response, in RFC 9110's word): everything the edge learns
 * about it, in one object that every step reads instead of positional parameters. A class, so its
 * methods cost no closures per request.
 */
export class Exchange {
  readonly path: string;
  /** The raw query string, without the `?`. */
  readonly query: string;
  readonly startedAt = performance.now();
  face: Face = 'rest';
  /** The API key's id once authenticated ('' until then): logs and metrics name keys by it. */
  keyId = '';
  /** Whether the key may send GraphQL documents of its own under TRUSTED_DOCUMENTS=enforce. */
  arbitraryDocuments = false;
  /** What the key may do (none until authenticated): the edge and each GraphQL operation check it. */
  scopes = NO_SCOPES;
  /** Where the request came from, as TRUST_PROXY's rule reads it ('' until authentication looks). */
  clientAddress = '';
  /** Whether the edge took this request's rate-limit point (a 304 gives back only a point it took). */
  pointPaid = false;
  /** The published document a GraphQL request named (`sha256:…`), '' when it sent none. */
  documentId = '';
  /** The MCP tool a request to /mcp called, '' for any other request. */
  tool = '';
  /** Path parameters of the matched route, still percent-encoded. */
  params: Readonly<Record<string, string>> = {};
  /** Set when the request opened a subscription stream: its events and why it ended. */
  stream: StreamRecord | undefined = undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly id: string,
  ) {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    this.path = queryAt === -1 ? url : url.slice(0, queryAt);
    this.query = queryAt === -1 ? '' : url.slice(queryAt + 1);
  }

  get method(): string {
    return this.req.method ?? 'GET';
  }

  /** True once the client has gone away: work queued for it can be dropped. */
  clientGone(): boolean {
    return this.res.destroyed && !this.res.writableFinished;
  }

  /** Runs `listener` once the response is over, however it ended (sent, cut, never started). */
  whenClosed(listener: () => void): void {
    this.res.once('close', listener);
  }

  /** Cuts the connection at once: for a stream whose client stopped reading, which nothing else ends. */
  cut(): void {
    this.res.destroy();
  }

  setResponseHeader(name: string, value: string): void {
    setEarlyHeader(this.res, name, value);
  }

  /** Each value of a header apart (Node joins repeats with ", "); undefined when it was not sent. */
  headerValues(name: string): readonly string[] | undefined {
    return this.req.headers[name] === undefined ? undefined : this.req.headersDistinct[name];
  }
}
