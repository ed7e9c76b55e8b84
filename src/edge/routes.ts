import type { IncomingMessage, ServerResponse } from 'node:http';
import { missingScopeMessage, type Scope } from '../auth/scopes.ts';
import type { Exchange } from '../http/exchange.ts';
import { type Face, type HttpError, sendError } from '../http/send-json.ts';
import { MCP_ENDPOINT } from '../mcp/mcp-endpoint.ts';
import { REST_OPERATIONS, scopeOf } from '../rest/contract-operations.ts';
import { deprecationHeaders } from '../rest/deprecation.ts';
import type { RestExecutor } from '../rest/executor.ts';
import { sendHealth } from './health.ts';

export type Method = 'GET' | 'POST';
export type Handler = (exchange: Exchange) => unknown;
type Params = Readonly<Record<string, string>>;

/** One entry of the edge's table: what every answer on a path shares is read from here, never decided again. */
export interface Route {
  /** The metric label: a template, never the raw path, which clients choose. */
  label: string;
  /** The path parameters when this route serves the request, undefined when it does not. */
  match(path: string, req: IncomingMessage): Params | undefined;
  /** 'key': rate limits and authentication come first, before any 404, 405, 413 or 415. */
  access: 'public' | 'key';
  /** The body shape of its errors. */
  face: Face;
  /** Handlers by method (HEAD goes wherever GET does; others get 405), or one for every method. */
  methods: Partial<Record<Method, Handler>> | Handler;
  /** On a route that needs a key: the scope it must have for each method (HEAD: GET's); none named, any key. */
  scopes?: Partial<Record<Method, Scope>>;
  /** False: HEAD gets 405 and Allow leaves it out (GraphQL over HTTP defines only GET and POST). */
  head?: false;
  /** Left out of the access log: probes a balancer calls every few seconds. */
  quiet?: boolean;
  /** Headers every answer on the route carries, a 401 or 429 included (a deprecated route says so). */
  headers?: Readonly<Record<string, string>>;
  /** Browser apps on the origins in CORS_ORIGINS may call it: preflights answered, CORS headers on answers. */
  crossOrigin?: true;
  /** A page from an origin not in CORS_ORIGINS is refused (403) before its key is read. */
  refusesOtherOrigins?: true;
}

const NO_PARAMS: Params = Object.freeze({});

export const exactPath =
  (path: string): Route['match'] =>
  (candidate) =>
    candidate === path ? NO_PARAMS : undefined;

export const pathPrefix =
  (prefix: string): Route['match'] =>
  (candidate) =>
    candidate.startsWith(prefix) ? NO_PARAMS : undefined;

/** An OpenAPI-style template (`/pets/{petId}`): each `{name}` is one path segment. */
export function pathTemplate(template: string): Route['match'] {
  const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, '(?<$1>[^/]+)');
  const pattern = new RegExp(`^${source}$`);
  return (candidate) => {
    const found = pattern.exec(candidate);
    return found ? (found.groups ?? NO_PARAMS) : undefined;
  };
}

/** RFC 9110 §15.5.6: a 405 names the methods the path takes; HEAD goes wherever GET does. */
function allowOf(route: Route): string {
  const methods = typeof route.methods === 'function' ? [] : Object.keys(route.methods);
  return [...methods, ...(methods.includes('GET') && route.head !== false ? ['HEAD'] : [])].join(', ');
}

/** Walks the routes in order; the fallback serves every path none of them matches. */
export function createRouteTable(routes: readonly Route[], fallback: Route) {
  const allow = new Map([...routes, fallback].map((route) => [route, allowOf(route)]));
  return {
    /** The route of a request; sets the exchange's path parameters. */
    find(exchange: Exchange): Route {
      for (const route of routes) {
        const params = route.match(exchange.path, exchange.req);
        if (params === undefined) continue;
        exchange.params = params;
        return route;
      }
      return fallback;
    },
    handlerFor(route: Route, method: string): Handler | undefined {
      if (typeof route.methods === 'function') return route.methods;
      const wanted = method === 'HEAD' && route.head !== false ? 'GET' : method;
      return Object.hasOwn(route.methods, wanted) ? route.methods[wanted as Method] : undefined;
    },
    /** 403 when the key lacks the scope the route needs for this method, before its handler runs. */
    forbidden(route: Route, exchange: Exchange): HttpError | undefined {
      if (!route.scopes) return undefined;
      const method = exchange.method === 'HEAD' ? 'GET' : exchange.method;
      const needed = Object.hasOwn(route.scopes, method) ? route.scopes[method as Method] : undefined;
      if (!needed || exchange.scopes.has(needed)) return undefined;
      return { status: 403, code: 'FORBIDDEN', message: missingScopeMessage(needed) };
    },
    methodNotAllowed(route: Route, exchange: Exchange): HttpError {
      const methods = allow.get(route) ?? '';
      const message = `${exchange.method} is not allowed on ${exchange.path}; use ${methods}`;
      return { status: 405, code: 'METHOD_NOT_ALLOWED', message, headers: { Allow: methods } };
    },
  };
}

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
  /** POST /mcp once authenticated: agents' tool calls. */
  mcp: Handler;
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
      scopes[operation.method] = scopeOf(operation);
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
    {
      label: MCP_ENDPOINT,
      match: exactPath(MCP_ENDPOINT),
      access: 'key',
      face: 'rest',
      // Stateless: no stream to GET, no session to DELETE (405 tells MCP clients so).
      methods: { POST: handlers.mcp },
      head: false,
      crossOrigin: true,
      // The Streamable HTTP transport asks it: a page's Origin is checked on every request.
      refusesOtherOrigins: true,
    },
  ];
  if (handlers.metrics) {
    // Operators' data (other keys' ids, document ids, versions): not for every client key.
    routes.push({ ...page('/metrics', handlers.metrics), access: 'key', scopes: { GET: 'metrics:read' } });
  }
  return { routes, fallback: notFound };
}
