import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { setEarlyHeader } from '../http/edge-response.ts';
import { Exchange } from '../http/exchange.ts';
import { MAX_QUEUED_RESPONSES, queueBehind } from '../http/pipelining.ts';
import { ClientClosedError } from '../http/read-body.ts';
import { type HttpError, sendError } from '../http/send-json.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { TraceFields } from '../telemetry/log-fields.ts';
import type { RequestTracing } from '../telemetry/request-span.ts';
import { createAccessLog } from './access-log.ts';
import type { Admission } from './authenticate.ts';
import {
  actualResponseHeaders,
  allowedOrigin,
  type CorsPolicy,
  isPreflight,
  originRefusal,
  preflightHeaders,
} from './cors.ts';
import type { Drain } from './drain.ts';
import { createRouteTable, type Route } from './routes.ts';

export interface EdgeOptions {
  routes: readonly Route[];
  fallback: Route;
  authenticate: (exchange: Exchange) => Admission;
  drain: Drain;
  logger: Logger;
  metrics: Metrics;
  /** Only while tracing: names each server span after its route; its ids go in the access log. */
  tracing?: RequestTracing;
  /** The origins whose browser apps may call the crossOrigin routes (CORS_ORIGINS); undefined: CORS off. */
  cors?: CorsPolicy;
}

const SANE_ID = /^[\w.-]{1,128}$/;

/** The caller's X-Request-Id when it is a sane token (so it can be traced across services), else a new one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
}

const UNEXPECTED_ERROR: HttpError = { status: 500, code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.' };

/** What every answer on the route carries, whoever writes it (a 401, 404 or 429 included). */
function setRouteHeaders(res: ServerResponse, route: Route): void {
  // OWASP's REST headers: no answer is sniffed into another type, and none that needs a key is cached.
  setEarlyHeader(res, 'X-Content-Type-Options', 'nosniff');
  if (route.access === 'key') setEarlyHeader(res, 'Cache-Control', 'no-store');
  if (route.headers) for (const name in route.headers) setEarlyHeader(res, name, route.headers[name] as string);
}

/** The request histogram. A subscription stream lasts as long as its client likes: not latency, left out. */
function observeRequest(metrics: Metrics, route: Route, { req, res, stream, startedAt }: Exchange, endedAt: number) {
  if (stream) return;
  // 499 (nginx's "client closed request"): the client left before its response was complete.
  const status = res.writableFinished ? res.statusCode : 499;
  metrics.observeRequest(route.label, req.method ?? '', status, (endedAt - startedAt) / 1000);
}

/**
 * CORS on a route browser apps call: the answer depends on Origin whatever it is; an allowed
 * origin's answers say so, and its preflight is answered 204 here, before any key is asked for or
 * any limit counts it. True when the preflight was answered.
 */
function crossOrigin(cors: CorsPolicy, route: Route, { req, res }: Exchange): boolean {
  const origin = allowedOrigin(cors, req);
  if (origin === undefined) {
    // A cache must not hand this answer, without CORS headers, to an allowed origin.
    setEarlyHeader(res, 'Vary', 'Origin');
    return false;
  }
  if (isPreflight(req)) {
    const methods = typeof route.methods === 'function' ? [] : Object.keys(route.methods);
    res.writeHead(204, preflightHeaders(origin, methods)).end();
    return true;
  }
  const headers = actualResponseHeaders(origin);
  for (const name in headers) setEarlyHeader(res, name, headers[name] as string);
  return false;
}

/** A request whose response waits behind another on its connection: served unless past the bound. */
function servesQueued(logger: Logger, exchange: Exchange): boolean {
  const queued = queueBehind(exchange.req.socket, exchange.res);
  const limit = MAX_QUEUED_RESPONSES;
  if (queued === 'cut') logger.warn({ reqId: exchange.id, limit }, 'too many pipelined requests: connection closed');
  return queued === 'serve';
}

/**
 * The service's one request listener. Once per request: request id, access log, request metrics and
 * the drain's bookkeeping (a request pipelined past MAX_QUEUED_RESPONSES gets no further); then the
 * route table: CORS (preflights answered before anything else), the key and rate limits on routes
 * that need them, 405 for a method the route lacks, 403 for a key without the scope the method
 * needs, and the route's handler.
 */
export function createEdgeListener(options: EdgeOptions) {
  const { routes, fallback, authenticate, drain, logger, metrics, tracing, cors } = options;
  const table = createRouteTable(routes, fallback);
  const accessLog = createAccessLog(logger);

  function dispatch(route: Route, exchange: Exchange): unknown {
    const handler = table.handlerFor(route, exchange.method);
    if (!handler) return sendError(exchange.res, route.face, table.methodNotAllowed(route, exchange));
    const forbidden = table.forbidden(route, exchange);
    if (forbidden) return sendError(exchange.res, route.face, forbidden);
    return handler(exchange);
  }

  function serve(route: Route, exchange: Exchange): unknown {
    if (route.access === 'public') return dispatch(route, exchange);
    const admitted = authenticate(exchange);
    if (admitted === true) return dispatch(route, exchange);
    if (admitted === false) return;
    return admitted.then((admit) => (admit ? dispatch(route, exchange) : undefined));
  }

  function fail(exchange: Exchange, error: unknown): void {
    // A client that left mid-request is in the access log already; there is no one to answer.
    if (error instanceof ClientClosedError) return void exchange.res.destroy();
    logger.error({ err: error, reqId: exchange.id }, 'unexpected error at the edge');
    tracing?.failed(error);
    if (exchange.res.headersSent) return void exchange.res.destroy();
    sendError(exchange.res, exchange.face, UNEXPECTED_ERROR);
  }

  function finish(route: Route, exchange: Exchange, trace: TraceFields | undefined): void {
    drain.done(exchange.res);
    // One reading of the clock for the line and the metrics: they agree, and a request pays for one.
    const endedAt = performance.now();
    if (!route.quiet) accessLog(exchange, endedAt, trace);
    observeRequest(metrics, route, exchange, endedAt);
  }

  return function listener(req: IncomingMessage, res: ServerResponse): void {
    const exchange = new Exchange(req, res, requestIdOf(req));
    setEarlyHeader(res, 'X-Request-Id', exchange.id);
    drain.track(res);
    const route = table.find(exchange);
    exchange.face = route.face;
    // The fallback's label names no route: its span keeps the bare method, as OpenTelemetry asks.
    const trace = tracing?.routed(exchange.method, route === fallback ? undefined : route.label);
    setRouteHeaders(res, route);
    res.once('close', () => finish(route, exchange, trace));
    // Pipelined behind an unfinished response: served within the bound, else it ends with its connection.
    if (res.socket === null && !servesQueued(logger, exchange)) return;
    try {
      const otherOrigin = route.refusesOtherOrigins && originRefusal(cors, req, exchange.path);
      if (otherOrigin) return void sendError(res, route.face, otherOrigin);
      if (cors && route.crossOrigin && crossOrigin(cors, route, exchange)) return;
      const pending = serve(route, exchange);
      if (pending instanceof Promise) pending.catch((error: unknown) => fail(exchange, error));
    } catch (error) {
      fail(exchange, error);
    }
  };
}
