import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PublicPages } from '../edge/edge.ts';
import { sendJson } from '../http/send-json.ts';

// INTERIM (replaced before commit): wires the helper's GraphiQL / docs / assets modules.
export function createPublicPages(options: {
  graphqlEndpoint: string;
  restBasePath: string;
  graphiqlApiKey: string | undefined;
  openApiDocument: (req: IncomingMessage, res: ServerResponse) => void;
}): PublicPages {
  const missing = (_req: IncomingMessage, res: ServerResponse) => sendJson(res, 404, { code: 'ROUTE_NOT_FOUND', message: 'not yet', status: 404 });
  return { graphiql: missing, apiDocs: missing, assets: missing, openApiDocument: options.openApiDocument };
}
