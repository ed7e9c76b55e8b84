import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { sendJsonText } from '../http/send-json.ts';

/** The contract is written in schema/openapi.yaml; `npm run openapi:json` writes this copy of it. */
export const OPENAPI_YAML_FILE = fileURLToPath(new URL('../../schema/openapi.yaml', import.meta.url));
export const OPENAPI_JSON_FILE = fileURLToPath(new URL('../../schema/openapi.json', import.meta.url));

/**
 * The committed REST contract, read once; the service serves it and the tests validate against it.
 * Read from its JSON copy (a drift test keeps it equal to the YAML): loading a YAML parser at run
 * time would cost the service's memory for one parse at start (docs/benchmarks.md).
 */
export function loadOpenApiDocument(): Record<string, unknown> {
  return JSON.parse(readFileSync(OPENAPI_JSON_FILE, 'utf8')) as Record<string, unknown>;
}

/**
 * Serves the document as JSON naming this deployment's base path as its server, so clients
 * generated from it call the right place (staging, say); the server keeps its other fields (its
 * audience, `x-internal`). Serialised once.
 */
export function createOpenApiDocumentHandler(document: Record<string, unknown>, basePath: string) {
  const [server] = (document.servers as Record<string, unknown>[] | undefined) ?? [];
  const json = JSON.stringify({ ...document, servers: [{ ...server, url: basePath }] });
  return (_req: IncomingMessage, res: ServerResponse): void => sendJsonText(res, 200, json);
}
