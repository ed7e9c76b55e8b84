import type { OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** One flat list: writeHead takes it as it is (an object would be walked key by key). */
function headerLines(headers: OutgoingHttpHeaders | undefined): OutgoingHttpHeader[] {
  const lines: OutgoingHttpHeader[] = [];
  if (headers) for (const name in headers) lines.push(name, headers[name] as OutgoingHttpHeader);
  return lines;
}

/** Writes a whole JSON response in one go, with its length, so Node never chunks it. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: OutgoingHttpHeaders): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** sendJson for a body that is JSON already. */
export function sendJsonText(res: ServerResponse, status: number, json: string, headers?: OutgoingHttpHeaders): void {
  const lines = headerLines(headers);
  lines.push('Content-Type', JSON_TYPE, 'Content-Length', Buffer.byteLength(json));
  res.writeHead(status, lines);
  res.end(json);
}

/** 304 (RFC 9110 §15.4.5): no body, and the headers the 200 would carry for caches (ETag, Cache-Control, Vary). */
export function sendNotModified(res: ServerResponse, headers: OutgoingHttpHeaders): void {
  res.writeHead(304, headerLines(headers));
  res.end();
}

/** Which body shape an error takes: a GraphQL response on /graphql, the contract's Error body elsewhere. */
export type Face = 'graphql' | 'rest';

/** An error as every answer carries it: the contract's code, its one status, a message for people. */
export interface HttpError {
  status: number;
  code: string;
  message: string;
  /** Headers the error itself needs (`Allow`, `Retry-After`, `Connection: close`). */
  headers?: Readonly<Record<string, string>>;
}

/** The contract's `Error` body: what REST answers, and what an MCP tool's failure says. */
export function errorBody({ code, message, status }: HttpError): { code: string; message: string; status: number } {
  return { code, message, status };
}

/** The service's one writer of error answers, for every face, route and page; errors are never cached. */
export function sendError(res: ServerResponse, face: Face, error: HttpError, headers?: OutgoingHttpHeaders): void {
  const body =
    face === 'graphql' ? { errors: [{ message: error.message, extensions: { code: error.code } }] } : errorBody(error);
  sendJson(res, error.status, body, { ...error.headers, ...headers, 'Cache-Control': 'no-store' });
}
