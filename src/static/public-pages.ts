import type { IncomingMessage, ServerResponse } from 'node:http';
import { createApiDocsPage } from './api-docs-page.ts';
import { assetUrl, DEFAULT_ASSETS_DIR } from './asset-manifest.ts';
import { createFrontDoor } from './front-door.ts';
import { createGraphiQLPage } from './graphiql-page.ts';
import { isLocalBrowserRequest } from './loopback.ts';
import { createStaticAssets } from './static-assets.ts';

export interface PublicPagesOptions {
  graphqlEndpoint: string;
  restBasePath: string;
  /**
   * A generated development key (main.ts makes one on loopback only), pre-filled in GraphiQL's
   * Headers tab for a browser on this machine only.
   */
  graphiqlApiKey: string | undefined;
  openApiDocument: (req: IncomingMessage, res: ServerResponse) => void;
  assetsDir?: string;
}

const EXAMPLE_OPERATION = /* GraphQL */ `# Every request needs your API key, sent in the Headers tab below.
query AvailablePets {
  pets(status: AVAILABLE, limit: 10) {
    id
    name
    categoryId
    status
  }
}

mutation AddPet {
  createPet(input: { name: "Rex", categoryId: 1, status: AVAILABLE }) {
    id
    name
  }
}
`;

const KEY_HINT =
  'Set your API key in the Headers tab (bottom left): replace <API_KEY> in {"Authorization": "Bearer <API_KEY>"}, then run a query. Until then the schema and docs cannot load.';

/** GraphiQL, the REST API reference and their assets, built from the files `npm run build` wrote. */
export function createPublicPages(options: PublicPagesOptions) {
  const assets = createStaticAssets({ dir: options.assetsDir ?? DEFAULT_ASSETS_DIR, urlPrefix: '/assets' });
  const graphiqlWith = (key: string | undefined) =>
    createGraphiQLPage({
      manifest: assets.manifest,
      graphqlEndpoint: options.graphqlEndpoint,
      title: 'Petstore GraphQL',
      defaultQuery: EXAMPLE_OPERATION,
      headers: JSON.stringify({ Authorization: `Bearer ${key ?? '<API_KEY>'}` }, null, 2),
      ...(key ? { holdsKey: true } : { keyHint: KEY_HINT }),
    });
  const graphiql = graphiqlWith(undefined);
  const graphiqlWithKey = options.graphiqlApiKey ? graphiqlWith(options.graphiqlApiKey) : undefined;
  const apiDocs = createApiDocsPage({
    manifest: assets.manifest,
    openApiUrl: `${options.restBasePath}/openapi.json`,
    title: 'Petstore REST API',
  });
  // Browsers ask every origin for /favicon.ico: a redirect to the hashed icon, not a 401 in their console.
  const favicon = {
    Location: assetUrl(assets.manifest, 'graphiql-favicon.ico'),
    'Cache-Control': 'public, max-age=86400',
  };
  return {
    frontDoor: createFrontDoor(options),
    favicon: (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(301, favicon).end(),
    graphiql: (req: IncomingMessage, res: ServerResponse) =>
      (graphiqlWithKey && isLocalBrowserRequest(req) ? graphiqlWithKey : graphiql).send(req, res),
    apiDocs: apiDocs.send,
    assets: assets.handle,
    openApiDocument: options.openApiDocument,
  };
}
