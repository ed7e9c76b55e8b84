import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const OPENAPI_FILE = fileURLToPath(new URL('../../schema/openapi.yaml', import.meta.url));

/** The committed REST contract, parsed once; the adapter serves it and the tests validate against it. */
export function loadOpenApiDocument(): Record<string, unknown> {
  return parse(readFileSync(OPENAPI_FILE, 'utf8')) as Record<string, unknown>;
}

/**
 * Serves the document as JSON naming this deployment's base path as its server, so clients
 * generated from it call the right place (staging, say). Serialised once.
 */
export function createOpenApiDocumentHandler(document: Record<string, unknown>, basePath: string) {
  const json = JSON.stringify({ ...document, servers: [{ url: basePath }] });
  const length = Buffer.byteLength(json);
  return (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': length });
    res.end(json);
  };
}
