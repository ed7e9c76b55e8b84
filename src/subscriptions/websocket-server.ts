import type { IncomingMessage } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { type ExecutionArgs, type ExecutionResult, type GraphQLError, getOperationAST } from 'graphql';
import type { OperationResult, SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { createGraphQLError, finalAsyncIterator, type GraphQLParams, isAsyncIterable } from 'graphql-yoga';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import type { AccessLog } from '../edge/access-log.ts';
import type { KeyCheck, KeyedExchange } from '../edge/authenticate.ts';
import { maskError } from '../graphql/errors.ts';
import { GRAPHQL_ENDPOINT, type GraphQLServer } from '../graphql-http/yoga.ts';
import type { KeyGone } from '../http/stream-outcomes.ts';
import { CLOSE_GRACE_MS, CloseCode, endSocket, onSocketEnd } from './websocket-close.ts';
import { WebSocketOperation } from './websocket-operation.ts';

export interface TransportOptions {
  /** Yoga's envelop, and its plugins for their params hooks (trusted documents, APQ), which getEnveloped does not run. */
  getEnveloped: GraphQLServer['getEnveloped'];
  plugins: readonly object[];
  /** The edge's key check: at `connection_init`, and again for each operation (a revoked key stops at once). */
  checkKey: (exchange: KeyedExchange, authorization: string | null) => KeyCheck;
  accessLog: AccessLog;
  logger: Logger;
  /** MAX_GRAPHQL_BODY_BYTES, as for a POST (ws closes with 1009 beyond it); pingMs, how often each socket is pinged. */
  maxPayloadBytes: number;
  pingMs: number;
  /** Acknowledged connections per key (MAX_SUBSCRIPTIONS_PER_KEY) and open sockets (MAX_SUBSCRIPTIONS) on this instance. */
  limits: { maxPerKey: number; maxTotal: number };
}

/** An open socket: its upgrade request, its admission's share (released at connection_init), its key once acknowledged. */
type Connection = { request: IncomingMessage; initialised: () => void; keyId?: string; authorization?: string };

/** Yoga's hooks read the request's method (a mutation by GET is refused): an operation over a socket is sent. */
const SENT = new Request(`http://websocket.invalid${GRAPHQL_ENDPOINT}`, { method: 'POST' });
/** graphql-ws runs execute or subscribe on what onSubscribe returned: the operation ran there, its result is handed on. */
const ranAlready = ({ rootValue }: ExecutionArgs) => rootValue as OperationResult;

/** An error as Yoga writes it: without the extensions only HTTP reads. */
function formatted(error: GraphQLError) {
  const { http: _http, unexpected: _unexpected, ...extensions } = error.extensions;
  const { extensions: _all, ...rest } = error.toJSON();
  return Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest;
}

/**
 * GraphQL over WebSocket by graphql-ws's own server on Yoga's envelop, loaded with ws on the first
 * upgrade. Each subscribe runs in onSubscribe, so that a refusal (errors without `data`, GraphQL
 * spec §7.1.2) is graphql-ws's `error`. One access-log line per operation, and per refused connection.
 */
export class WebSocketTransport {
  readonly wss: WebSocketServer;
  readonly #server: ReturnType<typeof useServer>;
  /** Open sockets, and the acknowledged ones per key (those not acknowledged yet are the admission's). */
  readonly #sockets = new Map<WebSocket, Connection>();
  readonly #perKey = new Map<string, Set<WebSocket>>();
  /** Operations under way: each ends with its socket, whatever graphql-ws still knows of it. */
  readonly #open = new Set<WebSocketOperation>();

  constructor(private readonly options: TransportOptions) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayloadBytes });
    this.#server = useServer<Record<string, unknown>>(
      {
        isProd: true,
        // The admission cuts a socket still waiting for connection_init (websocket-admission.ts).
        connectionInitWaitTimeout: 0,
        onConnect: ({ extra, connectionParams = {} }) => this.#admit(extra.socket, connectionParams),
        // What the peer sends once the server closed the socket starts nothing.
        onSubscribe: ({ extra: { socket } }, _id, payload) => {
          const connection = this.#sockets.get(socket);
          return connection ? this.#run(socket, connection, payload) : [createGraphQLError('The socket is closing')];
        },
        execute: ranAlready,
        subscribe: ranAlready,
        onNext: (_ctx, _id, _payload, _args, result) =>
          result.errors && { ...result, errors: result.errors.map(formatted) },
        onError: (_ctx, _id, _payload, errors) => errors.map(formatted),
      },
      this.wss,
      options.pingMs,
    );
  }

  /** Ends the operation once, however it ends: its own end, a refusal, a throw, or its socket's end. */
  #finish(operation: WebSocketOperation): void {
    if (!this.#open.delete(operation)) return;
    operation.close();
    this.options.accessLog(operation, performance.now());
  }

  /** connection_init: the key (`Authorization`, own property, as browsers cannot send the header), then its connection count. */
  async #admit(socket: WebSocket, params: Readonly<Record<string, unknown>>) {
    const { maxPerKey } = this.options.limits;
    const connection = this.#sockets.get(socket);
    connection?.initialised();
    if (!connection || socket.readyState !== socket.OPEN) return false;
    const attempt = new WebSocketOperation(connection.request);
    const value = Object.hasOwn(params, 'Authorization') ? params.Authorization : params.authorization;
    const authorization = typeof value === 'string' ? value : null;
    const checked = await this.options.checkKey(attempt, authorization);
    const held = this.#perKey.get(attempt.keyId) ?? new Set<WebSocket>();
    if (checked === true && held.size < maxPerKey && this.#sockets.has(socket)) {
      this.#perKey.set(attempt.keyId, held.add(socket));
      Object.assign(connection, { keyId: attempt.keyId, authorization: authorization ?? '' });
      return true;
    }
    const tooMany = `Too many WebSocket connections for this API key (${maxPerKey} on this instance): send several operations over one`;
    const { status, message } = checked === true ? { status: 429, message: tooMany } : checked.error;
    attempt.res.statusCode = status;
    this.options.accessLog(attempt, performance.now());
    // Closed with its reason: final for graphql-ws clients, which do not retry 4401 or 4429.
    const code = status === 401 ? CloseCode.Unauthorized : CloseCode.TooManyInitialisationRequests;
    const missing = 'An API key is required: send connectionParams {"Authorization": "Bearer <API_KEY>"}';
    endSocket(socket, code, status === 401 && !authorization ? missing : message);
    return false;
  }

  /** The key checked again, Yoga's params hooks, its envelop: the arguments, their result as rootValue; or a refusal. */
  async #execute(operation: WebSocketOperation, authorization: string, payload: SubscribePayload) {
    const checked = await this.options.checkKey(operation, authorization);
    if (checked !== true) {
      const { message, code, status } = checked.error;
      return { errors: [createGraphQLError(message, { extensions: { code, http: { status } } })] };
    }
    // graphql-ws requires a `query` string: an id alone comes with ''.
    const { query, ...rest } = payload;
    const context = { exchange: operation, request: SENT, params: (query === '' ? rest : payload) as GraphQLParams };
    const setParams = (params: GraphQLParams) => Object.assign(context, { params });
    for (const { onParams } of this.options.plugins as { onParams?: (payload: object) => unknown }[]) {
      await onParams?.({ params: context.params, request: SENT, setParams, context });
    }
    const { operationName, variables: variableValues } = context.params;
    const enveloped = this.options.getEnveloped(context);
    const document = enveloped.parse(context.params.query);
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length > 0) return { errors };
    const contextValue = await enveloped.contextFactory();
    const args = { schema: enveloped.schema, document, operationName, variableValues, contextValue };
    const subscription = getOperationAST(document, operationName)?.operation === 'subscription';
    return { ...args, rootValue: await (subscription ? enveloped.subscribe : enveloped.execute)(args) };
  }

  /** One subscribe: its arguments for graphql-ws, or its refusal; a stream ends the operation when it ends. */
  async #run(socket: WebSocket, { request, authorization = '' }: Connection, payload: SubscribePayload) {
    const operation = new WebSocketOperation(request);
    this.#open.add(operation);
    const ran: ExecutionArgs | ExecutionResult = await this.#execute(operation, authorization, payload).catch(
      (error) => {
        const masked = maskError(error);
        const failed = 'a GraphQL operation over WebSocket failed';
        if (masked !== error) this.options.logger.error({ err: error, reqId: operation.id }, failed);
        return { errors: [masked] };
      },
    );
    const result = ('document' in ran ? ran.rootValue : ran) as Awaited<OperationResult>;
    if (isAsyncIterable(result)) {
      operation.res.statusCode = 200;
      return { ...(ran as ExecutionArgs), rootValue: finalAsyncIterator(result, () => this.#finish(operation)) };
    }
    const { errors = [] } = result;
    // The status HTTP would answer, for the access log: as Yoga's, the highest an error asks for.
    const statuses = errors.map((error) => (error.extensions.http as { status?: number } | undefined)?.status ?? 0);
    operation.res.statusCode = Math.max(200, ...statuses);
    this.#finish(operation);
    // A key gone since (follow-pets.ts asks again): closed once its `error` went out, as a refused key is.
    const reason = errors[0]?.message ?? '';
    if (operation.res.statusCode === 401) setImmediate(() => endSocket(socket, CloseCode.Unauthorized, reason));
    return 'data' in result ? (ran as ExecutionArgs) : errors;
  }

  /** Whether another upgrade is taken: none past the instance's sockets (503). */
  full = (): boolean => this.#sockets.size >= this.options.limits.maxTotal;

  /** A socket the upgrade opened, handed to graphql-ws: what it holds is released as the server closes it. */
  serve(socket: WebSocket, request: IncomingMessage, initialised: () => void): void {
    const connection: Connection = { request, initialised };
    this.#sockets.set(socket, connection);
    const close = socket.close.bind(socket);
    const send = socket.send.bind(socket) as (data: string, sent?: (error?: Error) => void) => void;
    // graphql-ws closes by ws's close(): released at once, not at the peer's answer (websocket-close.ts).
    socket.close = (code, reason) => {
      close(code, reason);
      endSocket(socket, code ?? 1000, String(reason ?? ''));
    };
    // A send to a socket already cut (its client stopped reading) fails: its end says so, graphql-ws need not print it.
    Object.assign(socket, {
      send: (data: string, sent?: (error?: Error) => void) =>
        send(data, (error) => sent?.(request.socket.destroyed ? undefined : error)),
    });
    // Replies waiting for a peer that does not read (graphql-ws answers each ping, even before
    // connection_init) are bounded: past twice the largest message, the socket is cut.
    socket.on('message', () => socket.bufferedAmount > 2 * this.options.maxPayloadBytes && socket.terminate());
    this.wss.emit('connection', socket, request);
    // useServer writes a socket's error with console.error: an oversized message or a bad frame, which ws closes itself.
    socket.removeAllListeners('error').on('error', (err) => {
      this.options.logger.info({ err }, 'GraphQL WebSocket closed on a protocol error');
    });
    onSocketEnd(socket, () => {
      this.#sockets.delete(socket);
      const held = this.#perKey.get(connection.keyId ?? '');
      if (held?.delete(socket) && held.size === 0) this.#perKey.delete(connection.keyId ?? '');
      for (const operation of this.#open) if (operation.req === request) this.#finish(operation);
    });
  }

  /** The key is no longer valid: each of its connections closes with 4401 (final for graphql-ws clients). */
  endKey(keyId: string, why: KeyGone): void {
    const reason = why === 'expired' ? 'The API key expired' : 'The API key was revoked';
    for (const socket of [...(this.#perKey.get(keyId) ?? [])]) endSocket(socket, CloseCode.Unauthorized, reason);
  }

  /** Settles once every operation under way has ended, or after `deadlineMs`. */
  ended(deadlineMs: number): Promise<unknown> {
    const each = [...this.#open].map((operation) => new Promise<void>((done) => operation.whenClosed(done)));
    return Promise.race([Promise.all(each), delay(deadlineMs, undefined, { ref: false })]);
  }

  /** The streams' `complete` first (their slots were ended just before), then 1001 behind it; cut after a grace. */
  async goAway(): Promise<void> {
    await this.ended(CLOSE_GRACE_MS);
    await new Promise((turned) => setImmediate(turned));
    await this.#server.dispose();
  }
}
