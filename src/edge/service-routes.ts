import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Scope } from '../auth/scopes.ts';
import { priceOf } from '../graphql/operation-admission.ts';
import type { Exchange } from '../http/exchange.ts';
import { sendError } from '../http/send-json.ts';
import { REST_OPERATIONS } from '../rest/contract-operations.ts';
import { deprecationHeaders } from '../rest/deprecation.ts';
import type { RestExecutor } from '../rest/executor.ts';
import { sendHealth } from './health.ts';
import { exactPath, type Handler, type Method, pathPrefix, pathTemplate, type Route } from './route-matching.ts';

type PageHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Pages anyone may load: they hold no data, and a browser cannot send a bearer key for them. */
export interface PublicPages {
  /** `/`: what this service is and where to go next. */
  frontDoor: PageHandler;
  favicon: PageHandler;
  graphiql: PageHandler;
  apiDocs: PageHandler;
  openApiDocument: PageHandler;
  /** Everything under /assets/: the pages' scripts and styles. */
  assets: PageHandler;
}

export interface RouteHandlers {
  restBasePath: string;
  graphqlEndpoint: string;
  pages: PublicPages;
  readiness: Handler;
  /** /graphql once authenticated. */
  graphql: Handler;
  rest: RestExecutor;
  /** GET /metrics behind the key; undefined when METRICS_PORT serves it on a port of its own. */
  metrics?: Handler;
}

const isBrowserPage = (req: IncomingMessage) =>
  (req.method === 'GET' || req.method === 'HEAD') && (req.headers.accept?.includes('text/html') ?? false);

function page(path: string, handler: Handler): Route {
  return { label: path, match: exactPath(path), access: 'public', face: 'rest', methods: { GET: handler } };
}

const servePage =
  (handler: PageHandler): Handler =>
  ({ req, res }) =>
    handler(req, res);

/** The contract's operations, one route per path template, each method running its operation. */
function restRoutes({ restBasePath, rest }: RouteHandlers): Route[] {
  const paths = [...new Set(REST_OPERATIONS.map((operation) => operation.path))];
  return paths.map((path) => {
    const operations = REST_OPERATIONS.filter((operation) => operation.path === path);
    const methods: Partial<Record<Method, Handler>> = {};
    const scopes: Partial<Record<Method, Scope>> = {};
    for (const operation of operations) {
      methods[operation.method] = (exchange) => rest.run(operation, exchange);
      // The scope its GraphQL operation needs (pets:read for a query, pets:write for a mutation).
      scopes[operation.method] = priceOf(operation.document)?.scope;
    }
    const deprecated = operations.every((operation) => operation.deprecated);
    return {
      label: `${restBasePath}${path}`,
      match: pathTemplate(`${restBasePath}${path}`),
      access: 'key',
      face: 'rest',
      methods,
      scopes,
      crossOrigin: true,
      ...(deprecated ? { headers: deprecationHeaders(restBasePath) } : {}),
    };
  });
}

/** Every path nothing else serves: 404 in the contract's shape, once the key has been checked. */
const notFound: Route = {
  label: 'unmatched',
  match: () => undefined,
  access: 'key',
  face: 'rest',
  methods: ({ res, method, path }: Exchange) =>
    sendError(res, 'rest', { status: 404, code: 'ROUTE_NOT_FOUND', message: `No route ${method} ${path}` }),
};

/** The service's routes, in the order they are matched, and the fallback. */
export function createRoutes(handlers: RouteHandlers): { routes: Route[]; fallback: Route } {
  const { restBasePath, graphqlEndpoint, pages } = handlers;
  const probe = (path: string, handler: Handler): Route => ({ ...page(path, handler), quiet: true });
  const routes: Route[] = [
    probe('/health', sendHealth),
    probe('/ready', handlers.readiness),
    page('/', servePage(pages.frontDoor)),
    page('/favicon.ico', servePage(pages.favicon)),
    page(`${restBasePath}/openapi.json`, servePage(pages.openApiDocument)),
    page(`${restBasePath}/docs`, servePage(pages.apiDocs)),
    { ...page('/assets/*', servePage(pages.assets)), match: pathPrefix('/assets/') },
    {
      ...page(graphqlEndpoint, servePage(pages.graphiql)),
      match: (path, req) => (path === graphqlEndpoint && isBrowserPage(req) ? {} : undefined),
    },
    {
      label: graphqlEndpoint,
      match: exactPath(graphqlEndpoint),
      access: 'key',
      face: 'graphql',
      methods: { GET: handlers.graphql, POST: handlers.graphql },
      head: false,
      crossOrigin: true,
    },
    ...restRoutes(handlers),
  ];
  if (handlers.metrics) {
    // Operators' data (other keys' ids, document ids, versions): not for every client key.
    routes.push({ ...page('/metrics', handlers.metrics), access: 'key', scopes: { GET: 'metrics:read' } });
  }
  return { routes, fallback: notFound };
}
