import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ApiKeyVerifier } from '../auth/api-keys.ts';
import type { RequestIdentity } from '../context.ts';
import { BodyTooLargeError, ClientClosedError, readBody } from '../http/read-body.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { type RestExecutor, sendRestError } from '../rest/executor.ts';
import { RestError } from '../rest/http-errors.ts';
import { methodNotAllowed } from '../rest/router.ts';
import { createAccessLog, type RequestRecord } from './access-log.ts';
import { parsedGraphQLBody } from './graphql-body.ts';
import { sendHealth, sendReadiness } from './health.ts';
import { idempotencyKeyOf } from './idempotency-key.ts';
import type { RateLimits } from './rate-limits.ts';
import { requestIdOf } from './request-id.ts';
import { type Face, sendFaceError, sendGraphQLError, sendRateLimited, sendUnauthenticated } from './responses.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Pages anyone may load: they hold no data, and a browser cannot send a bearer key for them. */
export interface PublicPages {
  graphiql: Handler;
  apiDocs: Handler;
  openApiDocument: Handler;
  /** Everything under /assets/: the pages' scripts and styles. */
  assets: Handler;
}

export interface EdgeOptions {
  logger: Logger;
  verifyApiKey: ApiKeyVerifier;
  graphqlEndpoint: string;
  /** Yoga's node:http listener; the third argument becomes part of its server context. */
  graphql: (req: IncomingMessage, res: ServerResponse, identity: RequestIdentity) => unknown;
  rest: RestExecutor;
  restBasePath: string;
  pages: PublicPages;
  checkDatabase: () => Promise<void>;
  maxGraphQLBodyBytes: number;
  rateLimits: RateLimits;
  metrics: Metrics;
  /** Serve GET /metrics here, behind the key auth; false when METRICS_PORT serves it instead. */
  metricsRoute: boolean;
  /** The Prometheus text of `metrics`, as /metrics answers it. */
  sendMetrics: Handler;
}

const ASSETS_PREFIX = '/assets/';
const METRICS_PATH = '/metrics';

function isBrowserPage(req: IncomingMessage): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && (req.headers.accept?.includes('text/html') ?? false);
}

function onlyGet(handler: Handler): Handler {
  return (req, res) => {
    if (req.method === 'GET' || req.method === 'HEAD') return handler(req, res);
    sendRestError(res, methodNotAllowed(req.method ?? '', req.url?.split('?')[0] ?? '', ['GET']));
  };
}

/**
 * The service's one request listener. Once per request, for every route: request id, access log,
 * request metrics, rate limits (per client address for failed authentication, checked before the
 * key; per key after it), authentication (before anything that could answer 404, 405, 413 or 415),
 * /metrics, the Idempotency-Key check, the GraphQL body limit; then REST routes go to the REST
 * executor and /graphql to Yoga.
 */
export function createEdge(options: EdgeOptions) {
  const { logger, verifyApiKey, graphqlEndpoint, restBasePath, pages, rateLimits, metrics } = options;
  const accessLog = createAccessLog(logger);
  const restPrefix = `${restBasePath}/`;
  const publicRoutes = new Map<string, Handler>([
    [`${restBasePath}/openapi.json`, onlyGet(pages.openApiDocument)],
    [`${restBasePath}/docs`, onlyGet(pages.apiDocs)],
  ]);

  function route(req: IncomingMessage, res: ServerResponse, path: string, query: string, record: RequestRecord) {
    if (path === '/health' || path === '/ready') {
      record.quiet = true;
      return path === '/health' ? sendHealth(res) : sendReadiness(res, options.checkDatabase, draining);
    }
    const publicRoute = publicRoutes.get(path);
    if (publicRoute) return publicRoute(req, res);
    if (path.startsWith(ASSETS_PREFIX)) return pages.assets(req, res);
    if (path === graphqlEndpoint && isBrowserPage(req)) return pages.graphiql(req, res);

    const face: Face = path === graphqlEndpoint ? 'graphql' : 'rest';
    const isRest = path === restBasePath || path.startsWith(restPrefix);
    // Headers every answer on a route carries, a 401 or 429 included (a deprecated route says so).
    const routeHeaders = () =>
      isRest ? options.rest.headersBeforeAuth(req.method ?? '', path.slice(restBasePath.length)) : {};
    const address = req.socket.remoteAddress ?? '';
    const blocked = rateLimits.blockedAddress(address);
    if (blocked) {
      metrics.countRateLimited('auth_failures');
      return sendRateLimited(res, face, blocked, routeHeaders());
    }
    const auth = verifyApiKey(req.headers.authorization ?? null);
    if (!auth.ok) return refuseAuthentication(res, face, auth.keyWasSent, address, routeHeaders());
    record.keyId = auth.keyId;
    const counted = rateLimits.request(auth.keyId, res);
    if (!counted) return authenticated(req, res, path, query, face, auth.keyId);
    return counted.then((refusal) => {
      if (!refusal) return authenticated(req, res, path, query, face, auth.keyId);
      metrics.countRateLimited('per_key');
      return sendRateLimited(res, face, refusal, routeHeaders());
    });
  }

  /** After authentication and the key's rate limit: the Idempotency-Key check, then the route. */
  function authenticated(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: string,
    face: Face,
    keyId: string,
  ) {
    if (path === METRICS_PATH && options.metricsRoute) return onlyGet(options.sendMetrics)(req, res);
    const idempotency = idempotencyKeyOf(req);
    if ('problem' in idempotency) {
      const message = `Invalid value for "Idempotency-Key": ${idempotency.problem}`;
      return sendFaceError(res, face, 400, 'BAD_USER_INPUT', message);
    }
    const identity: RequestIdentity = {
      face,
      keyId,
      clientGone: () => res.destroyed && !res.writableFinished,
      idempotencyKey: idempotency.key,
      setResponseHeader: (name, value) => void res.setHeader(name, value),
    };
    return forward(req, res, path, query, face, identity);
  }

  /** 401, counted against the address; 429 instead once the address is over its limit. */
  function refuseAuthentication(
    res: ServerResponse,
    face: Face,
    keyWasSent: boolean,
    address: string,
    routeHeaders: Record<string, string>,
  ) {
    metrics.countAuthFailure(keyWasSent ? 'invalid' : 'missing');
    const counted = rateLimits.failedAuthentication(address);
    if (!counted) return sendUnauthenticated(res, face, keyWasSent, routeHeaders);
    return counted.then(({ headers, refusal }) => {
      if (!refusal) return sendUnauthenticated(res, face, keyWasSent, { ...routeHeaders, ...headers });
      metrics.countRateLimited('auth_failures');
      return sendRateLimited(res, face, refusal, routeHeaders);
    });
  }

  function forward(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: string,
    face: Face,
    identity: RequestIdentity,
  ) {
    if (face === 'graphql') return forwardToGraphQL(req, res, identity);
    if (path === restBasePath || path.startsWith(restPrefix)) {
      return options.rest.handle(req, res, path.slice(restBasePath.length), query, identity);
    }
    sendRestError(res, new RestError('ROUTE_NOT_FOUND', `No route ${req.method} ${path}`));
  }

  /**
   * The edge reads GraphQL bodies itself, under its limit, and hands Yoga the bytes: Yoga's own
   * limiter pipes every body through a fresh stream and abort signal, which halved throughput.
   */
  async function forwardToGraphQL(req: IncomingMessage, res: ServerResponse, identity: RequestIdentity) {
    if (req.method === 'POST') {
      let body: Buffer;
      try {
        body = await readBody(req, options.maxGraphQLBodyBytes);
      } catch (error) {
        if (!(error instanceof BodyTooLargeError)) throw error;
        // The unread rest of the body cannot carry another request on this connection: close it.
        return sendGraphQLError(res, 413, 'PAYLOAD_TOO_LARGE', error.message, { Connection: 'close' });
      }
      if (body.length === 0) {
        return sendGraphQLError(
          res,
          400,
          'BAD_REQUEST',
          'The request body is empty: send a JSON object with a "query"',
        );
      }
      const parsed = parsedGraphQLBody(req.headers['content-type'], body);
      if (!parsed.ok) return sendGraphQLError(res, 400, 'BAD_REQUEST', parsed.message);
      // With the stream consumed, @whatwg-node/server builds the fetch Request from `req.body`: a
      // parsed object it hands to Yoga as is (no second parse), bytes it lets Yoga read.
      (req as IncomingMessage & { body?: unknown }).body = parsed.body;
    }
    return options.graphql(req, res, identity);
  }

  function fail(res: ServerResponse, error: unknown) {
    // A client that left mid-request is in the access log already; there is no one to answer.
    if (error instanceof ClientClosedError) return void res.destroy();
    logger.error({ err: error }, 'unexpected error at the edge');
    if (!res.headersSent) sendRestError(res, new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.'));
    else res.destroy();
  }

  // Responses not yet sent: when draining starts, each is told to close its connection.
  const inFlight = new Set<ServerResponse>();
  let draining = false;

  /**
   * From now on /ready answers 503 and every response, those in flight included, carries
   * `Connection: close`, so keep-alive clients move to another instance instead of being reset.
   */
  function drain(): void {
    draining = true;
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
  }

  /** The route template a path is counted under in metrics: never the raw path, which clients choose. */
  function routeLabel(path: string): string {
    if (path === graphqlEndpoint || path === '/health' || path === '/ready' || path === METRICS_PATH) return path;
    if (publicRoutes.has(path)) return path;
    if (path.startsWith(ASSETS_PREFIX)) return `${ASSETS_PREFIX}*`;
    const template = path.startsWith(restPrefix)
      ? options.rest.routeTemplate(path.slice(restBasePath.length))
      : undefined;
    return template === undefined ? 'unmatched' : `${restBasePath}${template}`;
  }

  function listener(req: IncomingMessage, res: ServerResponse): void {
    const record: RequestRecord = { requestId: requestIdOf(req), startedAt: performance.now() };
    res.setHeader('X-Request-Id', record.requestId);
    if (draining) res.setHeader('Connection', 'close');
    inFlight.add(res);
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const query = queryAt === -1 ? '' : url.slice(queryAt + 1);
    res.once('close', () => {
      inFlight.delete(res);
      accessLog(req, res, record);
      // 499 (nginx's "client closed request"): the client left before its response was complete.
      const status = res.writableFinished ? res.statusCode : 499;
      metrics.observeRequest(routeLabel(path), req.method ?? '', status, (performance.now() - record.startedAt) / 1000);
    });
    try {
      const pending = route(req, res, path, query, record);
      if (pending instanceof Promise) pending.catch((error: unknown) => fail(res, error));
    } catch (error) {
      fail(res, error);
    }
  }

  return { listener, drain };
}
