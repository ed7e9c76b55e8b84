import type { OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes a whole JSON response in one go, with its length, so Node never chunks it. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: OutgoingHttpHeaders): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** sendJson for a body that is JSON already. */
export function sendJsonText(res: ServerResponse, status: number, json: string, headers?: OutgoingHttpHeaders): void {
  // One flat list: writeHead takes it as it is (an object would be walked key by key).
  const lines: OutgoingHttpHeader[] = [];
  if (headers) for (const name in headers) lines.push(name, headers[name] as OutgoingHttpHeader);
  lines.push('Content-Type', JSON_TYPE, 'Content-Length', Buffer.byteLength(json));
  res.writeHead(status, lines);
  res.end(json);
}
