import { assetUrl, type MountedManifest } from './asset-manifest.ts';
import { createHtmlPage, escapeHtml, type HtmlPage, jsonForScript } from './html-page.ts';

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

/**
 * The page Yoga's renderGraphiQL writes, minus the bundle it inlines: the bundle, its CSS and Monaco's
 * workers are hashed files, and the boot script calls the same renderYogaGraphiQL with the options
 * Yoga passes (title, defaultQuery, headers, shouldPersistHeaders) plus the endpoint.
 */
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
