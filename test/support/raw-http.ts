import { type IncomingHttpHeaders, request } from 'node:http';

/** What node:http read: the status, the headers and the body's bytes as they came on the wire. */
export interface RawHttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface RawHttpRequest {
  method?: string;
  headers?: Record<string, string>;
  /** Written one by one: without a Content-Length header they go out chunked. */
  chunks?: Array<string | Buffer>;
}

/**
 * One exchange through node:http, for what supertest and fetch hide or cannot shape: a body still
 * content-encoded, bytes that are not UTF-8, no Content-Type at all, a body in chunks.
 */
export function rawRequest(url: string | URL, options: RawHttpRequest = {}): Promise<RawHttpResponse> {
  const { method = 'GET', headers = {}, chunks = [] } = options;
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(parts) }),
      );
      response.on('error', reject);
    });
    // A socket error after the answer arrived does not matter; before it, there is no answer at all.
    let answered = false;
    outgoing.on('response', () => {
      answered = true;
    });
    outgoing.on('error', (error) => {
      if (!answered) reject(new Error(`no HTTP response: ${error.message}`));
    });
    for (const chunk of chunks) outgoing.write(chunk);
    outgoing.end();
  });
}
