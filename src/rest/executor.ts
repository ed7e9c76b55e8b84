import type { IncomingMessage, ServerResponse } from 'node:http';
import { type GraphQLEnumType, GraphQLError, type GraphQLSchema, validate } from 'graphql';
import type { Logger } from 'pino';
import type { Context, RequestIdentity } from '../context.ts';
import { ClientClosedError } from '../http/read-body.ts';
import { sendJson } from '../http/send-json.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { createDeprecationTracker, deprecationHeaders } from './deprecation.ts';
import { RestError, restErrorFromGraphQL } from './http-errors.ts';
import { readJsonBody } from './request-body.ts';
import { createRouter } from './router.ts';
import { createStatusCodec, type RestRequest, type Route, routes } from './routes.ts';

/** The part of Yoga the executor needs: its envelop (context factory, plugins, masking, execute). */
export interface Envelop {
  getEnveloped(initialContext: RequestIdentity): {
    schema: GraphQLSchema;
    contextFactory(): Promise<Context> | Context;
    execute(args: {
      schema: GraphQLSchema;
      document: unknown;
      variableValues: Record<string, unknown>;
      contextValue: unknown;
    }): Promise<unknown> | unknown;
  };
}

export interface RestExecutorOptions {
  schema: GraphQLSchema;
  envelop: Envelop;
  basePath: string;
  maxBodyBytes: number;
  logger: Logger;
  metrics: Metrics;
}

interface ExecutionResult {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLError[];
}

/**
 * Runs the REST routes: each one a pre-parsed operation of the GraphQL schema, executed through
 * Yoga's envelop (same context factory, execution plugins and error masking as /graphql) and written
 * straight to node:http, with no fetch Request/Response in between. Business rules live in the schema.
 */
export function createRestExecutor({ schema, envelop, basePath, maxBodyBytes, logger, metrics }: RestExecutorOptions) {
  const router = createRouter(routes);
  const status = createStatusCodec(schema.getType('PetStatus') as GraphQLEnumType);
  const trackDeprecatedUse = createDeprecationTracker(logger);
  const deprecated = deprecationHeaders(basePath);
  for (const route of routes) {
    const errors = validate(schema, route.document);
    if (errors.length)
      throw new Error(`REST route ${route.operationId} does not match the schema: ${errors[0]?.message}`);
  }

  function toRestError(error: unknown, renames: Readonly<Record<string, string>>): RestError {
    if (error instanceof RestError) return error;
    if (error instanceof GraphQLError) return restErrorFromGraphQL(error, renames);
    logger.error({ err: error }, 'unexpected error in the REST executor');
    return new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.');
  }

  /** Answers one request under the base path; `path` is relative to it, `query` the raw query string. */
  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: string,
    identity: RequestIdentity,
  ): Promise<void> {
    let route: Route | undefined;
    try {
      const matched = router.match(req.method ?? 'GET', path, `${basePath}${path}`);
      route = matched.route;
      if (route.deprecated) {
        trackDeprecatedUse(route.operationId, identity.keyId);
        metrics.countDeprecatedUse(route.operationId, identity.keyId);
      }
      const restRequest: RestRequest = {
        pathParams: matched.pathParams,
        query: new URLSearchParams(query),
        body: route.hasBody ? await readJsonBody(req, maxBodyBytes) : undefined,
        basePath,
      };
      const variableValues = route.variables(restRequest, status);
      const enveloped = envelop.getEnveloped(identity);
      // Yoga builds the context synchronously; awaiting a value would still cost a microtask.
      const built = enveloped.contextFactory();
      const contextValue = built instanceof Promise ? await built : built;
      const result = (await enveloped.execute({
        schema: enveloped.schema,
        document: route.document,
        variableValues,
        contextValue,
      })) as ExecutionResult;
      const [firstError] = result.errors ?? [];
      if (firstError || !result.data) throw firstError ?? new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.');
      const answer = route.respond(result.data, restRequest, status);
      sendJson(res, answer.status, answer.body, { ...answer.headers, ...(route.deprecated ? deprecated : {}) });
    } catch (error) {
      // A client that left mid-body is in the access log already; there is no one to answer.
      if (error instanceof ClientClosedError) return void res.destroy();
      sendRestError(res, toRestError(error, route?.renames ?? {}), route?.deprecated ? deprecated : {});
    }
  }

  /** Headers every answer on a route carries, a 401 included: a deprecated route says so even then. */
  function headersBeforeAuth(method: string, path: string): Record<string, string> {
    return router.find(method, path)?.deprecated ? deprecated : {};
  }

  /** The template (`/pets/{petId}`) of the routes on a path relative to the base path, whatever the method. */
  return { handle, headersBeforeAuth, routeTemplate: router.templateOf };
}

export type RestExecutor = ReturnType<typeof createRestExecutor>;

export function sendRestError(res: ServerResponse, error: RestError, extraHeaders: Record<string, string> = {}): void {
  sendJson(res, error.status, error.toBody(), { ...error.headers, ...extraHeaders });
}
