import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../http/send-json.ts';
import { assetUrl, DEFAULT_ASSETS_DIR } from './asset-manifest.ts';
import { isLocalBrowserRequest } from './loopback.ts';
import { createStaticAssets } from './static-assets.ts';
import { createApiDocsPage, createGraphiQLPage, createHtmlPage, escapeHtml, type HtmlPage } from './tool-pages.ts';

export interface PublicPagesOptions {
  graphqlEndpoint: string;
  restBasePath: string;
  /** A generated development key (main.ts, loopback only), pre-filled in GraphiQL and the REST reference. */
  developmentKey: string | undefined;
  openApiDocument: (req: IncomingMessage, res: ServerResponse) => void;
  assetsDir?: string;
}

const SERVICE = 'petstore-gateway';
const STYLE = `body { max-width: 40rem; margin: 3rem auto; padding: 0 1rem; font: 16px/1.5 system-ui, sans-serif; }
      a { color: #0b57d0; } code { font-size: 0.95em; }`;

/** `GET /` without a key: what this service is and its public pages, as HTML for browsers, else JSON. */
function createFrontDoor({ graphqlEndpoint, restBasePath }: PublicPagesOptions) {
  const links = {
    graphiql: graphqlEndpoint,
    apiReference: `${restBasePath}/docs`,
    openApi: `${restBasePath}/openapi.json`,
    health: '/health',
  };
  const json = {
    service: SERVICE,
    description: 'The pet store over GraphQL and the legacy REST contract; every API call needs an API key.',
    links,
  };
  const item = (href: string, text: string, note: string) =>
    `<li><a href="${escapeHtml(href)}">${escapeHtml(text)}</a>: ${note}</li>`;
  const page = createHtmlPage(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${SERVICE}</title>
    <style>${STYLE}</style>
  </head>
  <body>
    <h1>${SERVICE}</h1>
    <p>The pet store over GraphQL and the legacy REST contract. Every API call needs an API key,
      sent as <code>Authorization: Bearer &lt;API_KEY&gt;</code>.</p>
    <ul>
      ${item(links.graphiql, 'GraphiQL', 'explore and run GraphQL in the browser')}
      ${item(links.apiReference, 'REST API reference', 'read and try the REST operations')}
      ${item(links.openApi, 'OpenAPI document', 'the REST contract, for generating clients')}
      ${item(links.health, 'Health', 'whether the process is up')}
    </ul>
  </body>
</html>
`);
  return (req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('Vary', 'Accept');
    if (req.headers.accept?.includes('text/html')) page.send(req, res);
    else sendJson(res, 200, json, { 'Cache-Control': 'no-cache' });
  };
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

/** A page made without the development key and with it: the key goes only to a local browser (loopback.ts). */
function servedWithKey(page: (key: string | undefined) => HtmlPage, developmentKey: string | undefined) {
  const withoutKey = page(undefined);
  const withKey = developmentKey === undefined ? undefined : page(developmentKey);
  return (req: IncomingMessage, res: ServerResponse): void =>
    (withKey && isLocalBrowserRequest(req) ? withKey : withoutKey).send(req, res);
}

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
  const apiDocsWith = (key: string | undefined) =>
    createApiDocsPage({
      manifest: assets.manifest,
      openApiUrl: `${options.restBasePath}/openapi.json`,
      title: 'Petstore REST API',
      ...(key && { developmentKey: key }),
    });
  const graphiql = servedWithKey(graphiqlWith, options.developmentKey);
  const apiDocs = servedWithKey(apiDocsWith, options.developmentKey);
  // Browsers ask every origin for /favicon.ico: a redirect to the hashed icon, not a 401 in their console.
  const favicon = {
    Location: assetUrl(assets.manifest, 'graphiql-favicon.ico'),
    'Cache-Control': 'public, max-age=86400',
  };
  return {
    frontDoor: createFrontDoor(options),
    favicon: (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(301, favicon).end(),
    graphiql,
    apiDocs,
    assets: assets.handle,
    openApiDocument: options.openApiDocument,
  };
}
