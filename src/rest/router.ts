import { invalidParameter, RestError } from './http-errors.ts';
import type { Route } from './routes.ts';

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
}

function compile(route: Route): CompiledRoute {
  const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, '(?<$1>[^/]+)');
  return { route, pattern: new RegExp(`^${source}$`) };
}

function decodePathParams(groups: Record<string, string> | undefined): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, raw] of Object.entries(groups ?? {})) {
    try {
      decoded[name] = decodeURIComponent(raw);
    } catch {
      throw invalidParameter(name, 'is not valid percent-encoding');
    }
  }
  return decoded;
}

/** 405 with the methods the path takes; HEAD goes wherever GET does. */
export function methodNotAllowed(method: string, pathname: string, methods: readonly string[]): RestError {
  const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
  return new RestError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${pathname}; use ${allow}`, { Allow: allow });
}

/** Finds the route for a method and a path relative to the base path; throws the 404 or 405. */
export function createRouter(routes: readonly Route[]) {
  const compiled = routes.map(compile);
  return {
    /** The route a request would reach, or undefined; never throws. */
    find(method: string, path: string): Route | undefined {
      const wanted = method === 'HEAD' ? 'GET' : method;
      return compiled.find(({ route, pattern }) => route.method === wanted && pattern.test(path))?.route;
    },
    /** The template of the routes on this path, whatever their method; undefined when none is. */
    templateOf(path: string): string | undefined {
      return compiled.find(({ pattern }) => pattern.test(path))?.route.path;
    },
    match(method: string, path: string, fullPath: string): { route: Route; pathParams: Record<string, string> } {
      // RFC 9110 §9.1: HEAD goes wherever GET does; Node sends the headers and drops the body.
      const wanted = method === 'HEAD' ? 'GET' : method;
      const onPath: { route: Route; groups: Record<string, string> | undefined }[] = [];
      for (const { route, pattern } of compiled) {
        const match = pattern.exec(path);
        if (!match) continue;
        if (route.method === wanted) return { route, pathParams: decodePathParams(match.groups) };
        onPath.push({ route, groups: match.groups });
      }
      if (onPath.length === 0) throw new RestError('ROUTE_NOT_FOUND', `No route ${method} ${fullPath}`);
      throw methodNotAllowed(
        method,
        fullPath,
        onPath.map(({ route }) => route.method),
      );
    },
  };
}
