import { GraphQLEnumType, GraphQLError, validate, type GraphQLSchema } from 'graphql';
import type { Plugin, YogaInitialContext, YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context } from '../context.ts';
import { createDeprecationTracker, deprecationHeaders } from './deprecation.ts';
import { invalidParameter, RestError, restErrorFromGraphQL } from './http-errors.ts';
import { readJsonBody } from './request-body.ts';
import { createStatusCodec, routes, type RestRequest, type Route } from './routes.ts';

export interface RestAdapterOptions {
  schema: GraphQLSchema;
  basePath: string;
  maxBodyBytes: number;
  /** Served as JSON at `${basePath}/openapi.json`, without authentication. */
  openApiDocument: object;
  logger: Logger;
}

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
function methodNotAllowed(method: string, pathname: string, methods: ReadonlySet<string>): RestError {
  const allow = [...methods, ...(methods.has('GET') ? ['HEAD'] : [])].join(', ');
  return new RestError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${pathname}; use ${allow}`, { Allow: allow });
}

type YogaLike = YogaServerInstance<Record<string, unknown>, Record<string, unknown>>;

/**
 * The REST contract as a Yoga plugin: each route runs a pre-parsed operation of the same schema
 * through Yoga's own envelop (same context factory, auth, error masking), with no HTTP round trip.
 */
export function useRestAdapter(options: RestAdapterOptions): Plugin {
  const { basePath, maxBodyBytes, logger } = options;
  const compiled = routes.map(compile);
  const status = createStatusCodec(options.schema.getType('PetStatus') as GraphQLEnumType);
  const trackDeprecatedUse = createDeprecationTracker(logger);
  // Clients generated from the served document must call this deployment's base path (staging, say).
  const openApiJson = JSON.stringify({ ...options.openApiDocument, servers: [{ url: basePath }] });
  let getEnveloped: YogaLike['getEnveloped'];

  for (const { route } of compiled) {
    const errors = validate(options.schema, route.document);
    if (errors.length) throw new Error(`REST route ${route.operationId} does not match the schema: ${errors[0]?.message}`);
  }

  async function handle(request: Request, url: URL, serverContext: object): Promise<Response> {
    const path = url.pathname.slice(basePath.length);
    // RFC 9110 §9.1: HEAD goes wherever GET does; Node sends the headers and drops the body.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (path === '/openapi.json') {
      if (method === 'GET') return new Response(openApiJson, { headers: { 'Content-Type': 'application/json' } });
      return methodNotAllowed(request.method, url.pathname, new Set(['GET'])).toResponse();
    }
    const onPath = compiled
      .map(({ route, pattern }) => ({ route, match: pattern.exec(path) }))
      .filter((candidate) => candidate.match !== null);
    const matched = onPath.find(({ route }) => route.method === method);
    const extraHeaders = matched?.route.deprecated ? deprecationHeaders(basePath) : {};
    try {
      // Authentication first, before any other answer: it runs in the shared context factory.
      const enveloped = getEnveloped({ request, ...serverContext } as YogaInitialContext);
      const contextValue = await enveloped.contextFactory();
      if (!matched) {
        if (onPath.length === 0) throw new RestError('ROUTE_NOT_FOUND', `No route ${request.method} ${url.pathname}`);
        throw methodNotAllowed(request.method, url.pathname, new Set(onPath.map(({ route }) => route.method)));
      }
      const { route, match } = matched;
      if (route.deprecated) trackDeprecatedUse(route.operationId, (contextValue as unknown as Pick<Context, 'keyId'>).keyId);
      const restRequest: RestRequest = {
        pathParams: decodePathParams(match?.groups),
        query: url.searchParams,
        body: route.hasBody ? await readJsonBody(request, maxBodyBytes) : undefined,
        basePath,
      };
      const result = await enveloped.execute({
        schema: enveloped.schema,
        document: route.document,
        variableValues: route.variables(restRequest, status),
        contextValue,
      });
      if (!('data' in result) || result.errors?.length) {
        const [first] = result.errors ?? [];
        throw first ? restErrorFromGraphQL(first, route.renames) : new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.');
      }
      const answer = route.respond(result.data, restRequest, status);
      return Response.json(answer.body, { status: answer.status, headers: { ...answer.headers, ...extraHeaders } });
    } catch (error) {
      if (error instanceof RestError) return error.toResponse(extraHeaders);
      if (error instanceof GraphQLError) return restErrorFromGraphQL(error).toResponse(extraHeaders);
      logger.error({ err: error, path: url.pathname }, 'unexpected error in the REST adapter');
      return new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.').toResponse(extraHeaders);
    }
  }

  return {
    onYogaInit({ yoga }) {
      getEnveloped = (yoga as unknown as YogaLike).getEnveloped;
    },
    onRequest({ request, url, serverContext, endResponse }) {
      if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) return;
      return handle(request, url, serverContext ?? {}).then(endResponse);
    },
  };
}
