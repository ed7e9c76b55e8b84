import { assetUrl, type MountedManifest } from './asset-manifest.ts';
import { createHtmlPage, escapeHtml, type HtmlPage, jsonForScript } from './html-page.ts';

export interface ApiDocsPageOptions {
  manifest: MountedManifest;
  /** Where the service serves its OpenAPI document; the contract's relative `servers` resolve from it. */
  openApiUrl: string;
  title: string;
}

/**
 * Swagger UI, offline: the served contract, an Authorize button for the bearer key, Try it out on.
 * api-docs-boot.js adds what JSON cannot carry: a fresh Idempotency-Key for each Execute of a create.
 */
export function createApiDocsPage(options: ApiDocsPageOptions): HtmlPage {
  const url = (name: string) => assetUrl(options.manifest, name);
  const swaggerOptions = {
    url: options.openApiUrl,
    tryItOutEnabled: true,
    // Off: persisting would keep the bearer key in the browser's localStorage.
    persistAuthorization: false,
    // The default posts the contract to validator.swagger.io; the page must stay offline.
    validatorUrl: null,
    // A ?url= parameter must not point the page (and the key typed into it) at another document.
    queryConfigEnabled: false,
    displayRequestDuration: true,
  };
  return createHtmlPage(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title)}</title>
    <link rel="icon" href="${url('swagger-favicon.png')}" />
    <link rel="stylesheet" href="${url('swagger-ui.css')}" />
  </head>
  <body>
    <noscript>You need to enable JavaScript to read and try the API here.</noscript>
    <div id="swagger-ui"></div>
    <script id="api-docs-config" type="application/json">${jsonForScript(swaggerOptions)}</script>
    <script src="${url('api-docs-boot.js')}"></script>
    <script src="${url('swagger-ui-bundle.js')}"></script>
  </body>
</html>
`);
}
