import type { IncomingMessage } from 'node:http';
import { missingScopeMessage, type Scope } from '../auth/scopes.ts';
import type { Exchange } from '../http/exchange.ts';
import type { Face, HttpError } from '../http/send-json.ts';

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
