import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Writes a whole JSON response in one go, with its length, so Node never chunks it. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** sendJson for a body that is JSON already. */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  json: string,
  headers: OutgoingHttpHeaders = {},
): void {
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
  });
  res.end(json);
}
