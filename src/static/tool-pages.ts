import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { assetUrl, type MountedManifest } from './asset-manifest.ts';
import { matchesIfNoneMatch } from './static-assets.ts';

// The service's HTML pages, and the two browser tools it serves from hashed assets: GraphiQL and Swagger UI.

export interface HtmlPage {
  send(req: IncomingMessage, res: ServerResponse): void;
}

// The pages load nothing but our own files: this makes "no CDN" a browser-enforced rule. Styles stay
// inline-capable because GraphiQL, Monaco and Swagger UI all set style attributes at run time.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] as string);

/** JSON safe inside <script type="application/json">: no `</script>` can end the element early. */
export const jsonForScript = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** A fixed HTML document, revalidated on every load (304 while unchanged); one holding a secret is `no-store`. */
export function createHtmlPage(html: string, { cacheControl = 'no-cache' } = {}): HtmlPage {
  const body = Buffer.from(html);
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 24)}"`;
  const headers = {
    ETag: etag,
    'Cache-Control': cacheControl,
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
  };
  return {
    // The edge hands pages GET and HEAD only: other methods got their 405 there.
    send(req, res) {
      if (matchesIfNoneMatch(req, etag)) {
        res.writeHead(304, headers).end();
        return;
      }
      res.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
  };
}

export interface GraphiQLPageOptions {
  manifest: MountedManifest;
  graphqlEndpoint: string;
  title: string;
  defaultQuery: string;
  /** JSON text for GraphiQL's Headers tab. */
  headers: string;
  /** Shown above GraphiQL when the key is not pre-filled: how to set it. */
  keyHint?: string;
  /** True when `headers` holds a key: the page is then never stored by a browser or a cache. */
  holdsKey?: boolean;
}

// GraphiQL sizes itself to 100vh; with a hint above it, it takes the rest of the column instead.
const KEY_HINT_STYLE = `<style>
      body { display: flex; flex-direction: column; height: 100vh; }
      .key-hint { margin: 0; padding: 6px 12px; font: 14px/1.4 system-ui, sans-serif;
        background: #fff7d6; color: #3b2f00; border-bottom: 1px solid #e6d48a; }
      #root { flex: 1; min-height: 0; }
      #root .graphiql-container { height: 100%; width: 100%; }
    </style>`;

/** The page Yoga's renderGraphiQL writes, with the bundle, CSS and workers as hashed files instead of inline. */
export function createGraphiQLPage(options: GraphiQLPageOptions): HtmlPage {
  const url = (name: string) => assetUrl(options.manifest, name);
  const config = {
    workers: {
      editorWorkerService: url('graphiql-editor.worker.js'),
      json: url('graphiql-json.worker.js'),
      graphql: url('graphiql-graphql.worker.js'),
    },
    options: {
      title: options.title,
      endpoint: options.graphqlEndpoint,
      defaultQuery: options.defaultQuery,
      headers: options.headers,
      // Off: persisting would keep the bearer key in the browser's localStorage.
      shouldPersistHeaders: false,
    },
  };
  const hint = options.keyHint ? `<p class="key-hint" role="note">${escapeHtml(options.keyHint)}</p>` : '';
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title)}</title>
    <link rel="icon" href="${url('graphiql-favicon.ico')}" />
    <link rel="stylesheet" href="${url('graphiql.css')}" />
    ${hint ? KEY_HINT_STYLE : ''}
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run GraphiQL.</noscript>
    ${hint}
    <div id="root"></div>
    <script id="graphiql-config" type="application/json">${jsonForScript(config)}</script>
    <script src="${url('graphiql-boot.js')}"></script>
    <script src="${url('graphiql.js')}"></script>
  </body>
</html>
`;
  return createHtmlPage(html, options.holdsKey ? { cacheControl: 'no-store' } : {});
}

export interface ApiDocsPageOptions {
  manifest: MountedManifest;
  /** Where the service serves its OpenAPI document; the contract's relative `servers` resolve from it. */
  openApiUrl: string;
  title: string;
  /** The development key, authorized before the first Execute; the page is then never stored. */
  developmentKey?: string;
}

/** The contract's security scheme for the bearer key (schema/openapi.yaml, components.securitySchemes). */
const BEARER_SCHEME = 'bearerAuth';

// The boot script folds the contract's long introduction after its first paragraph, so the
// Authorize button and the operations are on the first screen.
const FOLD_STYLE = `<style>
      .swagger-ui .intro.folded .info .description > div > :not(:first-child) { display: none; }
      .swagger-ui .intro-toggle { margin: -28px 0 24px; padding: 4px 10px; font: 600 13px sans-serif;
        color: #3b4151; background: #f7f7f7; border: 1px solid #d8dde7; border-radius: 4px; cursor: pointer; }
    </style>`;

/**
 * Swagger UI, offline, with Authorize and Try it out; api-docs-boot.js adds what JSON cannot carry (an
 * Idempotency-Key per create, the development key's authorization, the folded introduction).
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
  const config = {
    swagger: swaggerOptions,
    ...(options.developmentKey && { authorize: { scheme: BEARER_SCHEME, key: options.developmentKey } }),
  };
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title)}</title>
    <link rel="icon" href="${url('swagger-favicon.png')}" />
    <link rel="stylesheet" href="${url('swagger-ui.css')}" />
    ${FOLD_STYLE}
  </head>
  <body>
    <noscript>You need to enable JavaScript to read and try the API here.</noscript>
    <div id="swagger-ui"></div>
    <script id="api-docs-config" type="application/json">${jsonForScript(config)}</script>
    <script src="${url('api-docs-boot.js')}"></script>
    <script src="${url('swagger-ui-bundle.js')}"></script>
  </body>
</html>
`;
  return createHtmlPage(html, options.developmentKey ? { cacheControl: 'no-store' } : {});
}
