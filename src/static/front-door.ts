import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../http/send-json.ts';
import { createHtmlPage, escapeHtml } from './html-page.ts';

export interface FrontDoorOptions {
  graphqlEndpoint: string;
  restBasePath: string;
}

const SERVICE = 'petstore-gateway';
const STYLE = `body { max-width: 40rem; margin: 3rem auto; padding: 0 1rem; font: 16px/1.5 system-ui, sans-serif; }
      a { color: #0b57d0; } code { font-size: 0.95em; }`;

/**
 * `GET /` without a key: what this service is and where to go next, as a small page for a browser
 * and as JSON for anything else. It names public pages only and tells nothing of the deployment.
 */
export function createFrontDoor({ graphqlEndpoint, restBasePath }: FrontDoorOptions) {
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
