import type { IncomingMessage } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { type ExecutionArgs, type ExecutionResult, type GraphQLError, getOperationAST } from 'graphql';
import type { OperationResult, SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import {
  createGraphQLError,
  finalAsyncIterator,
  type GraphQLParams,
  isAsyncIterable,
  type OnParamsEventPayload,
} from 'graphql-yoga';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import type { ServerContext } from '../context.ts';
import type { AccessLog } from '../edge/access-log.ts';
import type { KeyCheck, KeyedExchange } from '../edge/authenticate.ts';
import { maskError } from '../graphql/masked-errors.ts';
import { GRAPHQL_ENDPOINT, type GraphQLServer } from '../graphql-http/yoga.ts';
import { CloseCode, endSocket, onSocketEnd } from './websocket-close.ts';
import { WebSocketOperation } from './websocket-operation.ts';

export interface TransportOptions {
  /** Yoga's envelop (its plugins, parse, validate, execute, subscribe): the same rules as /graphql over HTTP. */
  getEnveloped: GraphQLServer['getEnveloped'];
  /** Yoga's plugins: their params hooks (trusted documents, persisted queries), which getEnveloped does not run. */
  plugins: readonly { onParams?: unknown }[];
  /** The edge's key check: at `connection_init`, and again for each operation (a revoked key stops at once). */
  checkKey: (exchange: KeyedExchange, authorization: string | null) => KeyCheck;
  accessLog: AccessLog;
  logger: Logger;
  /** Largest message taken (MAX_GRAPHQL_BODY_BYTES, as for a POST): ws closes with 1009 beyond it. */
  maxPayloadBytes: number;
  /** How often each socket is pinged; one that has not answered a ping by the next is cut. */
  pingMs: number;
}

/** One socket's state: the key its connection_init authenticated, and its operations under way. */
interface Connection {
  authorization?: string;
  /** Each ends with the socket, whatever graphql-ws still knows of it (an id reused while it started). */
  operations: Set<WebSocketOperation>;
  /** Its connection_init came: the socket leaves its address's share of waiting sockets. */
  initialised: () => void;
}

/** What Yoga's hooks read of a request: the exchange (the edge's, over HTTP), the request, its params. */
type YogaContext = ServerContext & { request: Request; params: GraphQLParams };
type ParamsHook = (payload: OnParamsEventPayload<YogaContext>) => unknown;

const MISSING_KEY = 'An API key is required: send connectionParams {"Authorization": "Bearer <API_KEY>"}';

/** Yoga's hooks read the request's method (a mutation by GET is refused): an operation over a socket is sent. */
const SENT = new Request(`http://websocket.invalid${GRAPHQL_ENDPOINT}`, { method: 'POST' });

/** A close reason is at most 123 bytes (RFC 6455 §5.5). */
const closeReason = (text: string) =>
  Buffer.from(text)
    .subarray(0, 123)
    .toString()
    .replace(/\uFFFD$/, '');

/** The key from connectionParams (`Authorization`, as browsers cannot send the header), own properties only. */
function authorizationOf(params: Readonly<Record<string, unknown>> | undefined): string | null {
  if (!params) return null;
  const value = Object.hasOwn(params, 'Authorization') ? params.Authorization : params.authorization;
  return typeof value === 'string' ? value : null;
}

/** The status HTTP would answer, for the access log: as Yoga's, the highest an error asks for, else 200. */
const statusOf = (errors: readonly GraphQLError[] = []) =>
  Math.max(200, ...errors.map((error) => (error.extensions.http as { status?: number } | undefined)?.status ?? 0));

/** An error as Yoga writes it: without the extensions only HTTP reads. */
function formatted(error: GraphQLError) {
  const { http: _http, unexpected: _unexpected, ...extensions } = error.extensions;
  const { extensions: _all, ...rest } = error.toJSON();
  return Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest;
}

/** graphql-ws runs execute or subscribe on what onSubscribe returned: the operation ran there, its result is handed on. */
const ranAlready = ({ rootValue }: ExecutionArgs) => rootValue as OperationResult;

/**
 * GraphQL over WebSocket by graphql-ws's own server (useServer) on Yoga's envelop, loaded with ws on
 * the first upgrade. `connection_init` runs the edge's key check on connectionParams; each subscribe
 * runs it again on the connection's key (one point, and a key revoked, expired or narrowed since is
 * seen at once), then Yoga's params hooks (trusted documents, persisted queries: getEnveloped does
 * not run them) and its envelop, as Yoga's graphql-ws example does. One access-log line per
 * operation at its end, and one per refused connection.
 */
export function createTransport(
  options: TransportOptions,
  acknowledge: (socket: WebSocket, keyId: string) => string | undefined,
) {
  const { getEnveloped, checkKey, accessLog, logger } = options;
  const paramsHooks = (options.plugins as { onParams?: ParamsHook }[]).flatMap((plugin) => plugin.onParams ?? []);
  const connections = new WeakMap<WebSocket, Connection>();
  const open = new Set<WebSocketOperation>();

  /** Ends the operation once, however it ends: its own end, a refusal, a throw, or its socket's end. */
  function finish(connection: Connection, operation: WebSocketOperation): void {
    if (!connection.operations.delete(operation)) return;
    open.delete(operation);
    operation.close();
    accessLog(operation, performance.now());
  }

  /** connection_init: the key, then the key's connection count; a refusal closes with its reason (final for graphql-ws clients). */
  async function admit(socket: WebSocket, request: IncomingMessage, params?: Readonly<Record<string, unknown>>) {
    const connection = connections.get(socket) as Connection;
    connection.initialised();
    if (socket.readyState !== socket.OPEN) return false;
    const attempt = new WebSocketOperation(request);
    const authorization = authorizationOf(params);
    const checked = await checkKey(attempt, authorization);
    const tooMany = checked === true ? acknowledge(socket, attempt.keyId) : undefined;
    if (checked === true && tooMany === undefined) {
      connection.authorization = authorization ?? '';
      return true;
    }
    const { status, message } = checked === true ? { status: 429, message: tooMany ?? '' } : checked.error;
    attempt.res.statusCode = status;
    accessLog(attempt, performance.now());
    const code = status === 401 ? CloseCode.Unauthorized : CloseCode.TooManyInitialisationRequests;
    endSocket(socket, code, closeReason(status === 401 && !authorization ? MISSING_KEY : message));
    return false;
  }

  /** The key checked again, Yoga's params hooks, then its envelop: the result and the arguments it ran with. */
  async function execute(operation: WebSocketOperation, authorization: string, payload: SubscribePayload) {
    const checked = await checkKey(operation, authorization);
    if (checked !== true) {
      const { message, code, status } = checked.error;
      return { result: { errors: [createGraphQLError(message, { extensions: { code, http: { status } } })] } };
    }
    // graphql-ws requires a `query` string: an id alone comes with ''.
    const { query, ...rest } = payload;
    const context: YogaContext = {
      exchange: operation,
      request: SENT,
      params: (query === '' ? rest : payload) as GraphQLParams,
    };
    const setParams = (params: GraphQLParams) => Object.assign(context, { params });
    for (const hook of paramsHooks) await hook({ params: context.params, request: SENT, setParams, context } as never);
    const { params } = context;
    const enveloped = getEnveloped(context);
    const document = enveloped.parse(params.query);
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length > 0) return { result: { errors } };
    const { operationName, variables: variableValues } = params;
    const args = { schema: enveloped.schema, document, operationName, variableValues };
    const ran = { ...args, contextValue: await enveloped.contextFactory() };
    const subscription = getOperationAST(document, operationName)?.operation === 'subscription';
    return {
      args: ran,
      result: (await (subscription ? enveloped.subscribe : enveloped.execute)(ran)) as OperationResult,
    };
  }

  /**
   * One subscribe, run here so that a refusal (errors without `data`: the operation never ran, GraphQL
   * spec §7.1.2) is graphql-ws's `error`; a stream ends the operation when it ends.
   */
  async function run(socket: WebSocket, request: IncomingMessage, payload: SubscribePayload) {
    const connection = connections.get(socket) as Connection;
    const operation = new WebSocketOperation(request);
    connection.operations.add(operation);
    open.add(operation);
    const { args, result } = await execute(operation, connection.authorization ?? '', payload).catch((error) => {
      const masked = maskError(error);
      if (masked !== error)
        logger.error({ err: error, reqId: operation.id }, 'a GraphQL operation over WebSocket failed');
      return { args: undefined, result: { errors: [masked] } };
    });
    if (args && isAsyncIterable(result)) {
      operation.res.statusCode = 200;
      return { ...args, rootValue: finalAsyncIterator(result, () => finish(connection, operation)) };
    }
    const { errors = [] } = result as ExecutionResult;
    operation.res.statusCode = statusOf(errors);
    finish(connection, operation);
    // A key gone since (follow-pets.ts asks again): closed once its `error` went out, as a refused key is.
    const message = closeReason(errors[0]?.message ?? '');
    if (operation.res.statusCode === 401) setImmediate(() => endSocket(socket, CloseCode.Unauthorized, message));
    return args && 'data' in (result as ExecutionResult) ? { ...args, rootValue: result } : errors;
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayloadBytes });
  const server = useServer<Record<string, unknown> | undefined>(
    {
      isProd: true,
      // The admission cuts a socket still waiting for connection_init (websocket-admission.ts).
      connectionInitWaitTimeout: 0,
      onConnect: ({ extra, connectionParams }) => admit(extra.socket, extra.request, connectionParams),
      // What the peer sends after the server closed the socket starts nothing.
      onSubscribe: ({ extra: { socket, request } }, _id, payload) =>
        socket.readyState === socket.OPEN ? run(socket, request, payload) : [createGraphQLError('Closing')],
      execute: ranAlready,
      subscribe: ranAlready,
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors && { ...result, errors: result.errors.map(formatted) },
      onError: (_ctx, _id, _payload, errors) => errors.map(formatted),
    },
    wss,
    options.pingMs,
  );

  return {
    wss,
    /** A socket the upgrade opened, handed to graphql-ws: what it holds is released as the server closes it. */
    serve(socket: WebSocket, request: IncomingMessage, initialised: () => void): void {
      const connection: Connection = { operations: new Set(), initialised };
      connections.set(socket, connection);
      const close = socket.close.bind(socket);
      // graphql-ws closes by ws's close(): released at once, not at the peer's answer (websocket-close.ts).
      socket.close = (code, reason) => {
        close(code, reason);
        endSocket(socket, code ?? 1000, String(reason ?? ''));
      };
      // Replies waiting for a peer that does not read (graphql-ws answers each ping, even before
      // connection_init) are bounded: past twice the largest message, the socket is cut.
      socket.on('message', () => socket.bufferedAmount > 2 * options.maxPayloadBytes && socket.terminate());
      wss.emit('connection', socket, request);
      // useServer writes a socket's error with console.error: an oversized message or a bad frame, which ws closes itself.
      socket
        .removeAllListeners('error')
        .on('error', (error) => logger.info({ err: error }, 'GraphQL WebSocket closed on a protocol error'));
      onSocketEnd(socket, () => {
        for (const operation of [...connection.operations]) finish(connection, operation);
      });
    },
    /** Settles once every operation under way has ended, or after `deadlineMs`. */
    ended: (deadlineMs: number) =>
      Promise.race([
        Promise.all([...open].map((operation) => new Promise<void>((done) => operation.whenClosed(done)))),
        delay(deadlineMs, undefined, { ref: false }),
      ]),
    /** Closes each socket with 1001 (cut after a grace if its peer does not answer); settles when none is left. */
    goAway: server.dispose,
  };
}

export type Transport = ReturnType<typeof createTransport>;
