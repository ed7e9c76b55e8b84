import { randomUUID } from 'node:crypto';
import { type ExecutionArgs, type ExecutionResult, type GraphQLFormattedError, parse } from 'graphql';
import type { ServerOptions, SubscribePayload } from 'graphql-ws';
import type { KeyRefusal } from '../auth/key-refusals.ts';
import type { ServerContext } from '../context.ts';
import { schema } from '../graphql/schema/index.ts';
import { GRAPHQL_ENDPOINT } from '../graphql-http/yoga.ts';
import type { ConnectionContext, ConnectionExtra, WebSocketsOptions } from './websocket.ts';
import { CloseCode, endSocket } from './websocket-close.ts';
import { type ConnectionCounts, tooManyForKey } from './websocket-connections.ts';
import { ForwardedError, forwardedResults, WebSocketOperation } from './websocket-operation.ts';

/** Yoga's fetch handler: the same plugins as /graphql over HTTP (trusted documents, APQ, limits, scopes). */
export type GraphQLFetch = (url: string, init: RequestInit, context: ServerContext) => Promise<Response> | Response;

/**
 * A stream comes back as SSE, anything else (a query's result, a refusal) as one JSON answer with
 * the status HTTP would give it: Yoga picks the last media type that fits the result.
 */
const ACCEPT = 'text/event-stream, application/graphql-response+json';

/**
 * graphql-ws runs what onSubscribe returns through `subscribe` when its document is a subscription:
 * Yoga has run the operation already, so this stand-in only makes graphql-ws hand its result on.
 */
const RUN_BY_YOGA = parse('subscription RunByYoga { __typename }');

/** A close reason is at most 123 bytes (RFC 6455 §5.5). */
const closeReason = (text: string) =>
  Buffer.from(text)
    .subarray(0, 123)
    .toString()
    .replace(/\uFFFD$/, '');

const MISSING_KEY = 'An API key is required: send connectionParams {"Authorization": "Bearer <API_KEY>"}';

/** The key from connectionParams (`Authorization`, as browsers cannot send the header), own properties only. */
function authorizationOf(params: Record<string, unknown> | undefined): string | null {
  if (!params) return null;
  const value = Object.hasOwn(params, 'Authorization') ? params.Authorization : params.authorization;
  return typeof value === 'string' ? value : null;
}

/** Where Yoga thinks the operations were posted: its endpoint on no real host. */
const URL_FOR_YOGA = `http://websocket.invalid${GRAPHQL_ENDPOINT}`;

/** The subscribe payload as a POST body: graphql-ws requires a `query` string, so an id alone comes with ''. */
function requestOf(payload: SubscribePayload): RequestInit {
  const { query, ...rest } = payload;
  const body = JSON.stringify(query === '' ? rest : payload);
  return { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body };
}

const argsOf = (rootValue: unknown): ExecutionArgs => ({ schema, document: RUN_BY_YOGA, rootValue });

/** Closes with `code` once the operation's `error` went out (graphql-ws sends it after onSubscribe resolves). */
function closeAfterError(extra: ConnectionExtra, code: number, reason: string): void {
  setImmediate(() => endSocket(extra.socket, code, closeReason(reason)));
}

/** A key gone while its operation started (follow-pets.ts asks again): closed as a refused key is. */
function closeUnauthorized(extra: ConnectionExtra, errors: readonly GraphQLFormattedError[] | undefined): void {
  closeAfterError(extra, CloseCode.Unauthorized, errors?.[0]?.message ?? '');
}

/**
 * `connection_init`: the edge's key check on connectionParams, then the key's connection count; a
 * refusal closes with its reason (4401 and 4429 are final for graphql-ws's client; 4403, graphql-ws's
 * own refusal, is retried).
 */
async function admitConnection(
  ctx: ConnectionContext,
  { checkKey, accessLog, limits }: Pick<WebSocketsOptions, 'checkKey' | 'accessLog' | 'limits'>,
  connections: ConnectionCounts,
): Promise<boolean> {
  const { request, socket } = ctx.extra;
  // Its connection_init came: the socket no longer waits in its address's share.
  ctx.extra.initialised();
  const attempt = new WebSocketOperation(request, randomUUID());
  const authorization = authorizationOf(ctx.connectionParams);
  const checked = await checkKey(attempt, authorization);
  if (checked === true && connections.acknowledge(socket, attempt.keyId)) {
    ctx.extra.key = { keyId: attempt.keyId, authorization: authorization ?? '' };
    return true;
  }
  const { status, message } =
    checked === true ? { status: 429, message: tooManyForKey(limits.maxPerKey) } : checked.error;
  attempt.res.statusCode = status;
  accessLog(attempt, performance.now());
  const code = status === 401 ? CloseCode.Unauthorized : CloseCode.TooManyInitialisationRequests;
  endSocket(socket, code, closeReason(status === 401 && !authorization ? MISSING_KEY : message));
  return false;
}

/** Operations under way, so that a stopping instance can wait for their `complete`. */
function createOpenOperations() {
  const open = new Set<WebSocketOperation>();
  const waiters = new Set<() => void>();
  return {
    add: (operation: WebSocketOperation) => void open.add(operation),
    delete(operation: WebSocketOperation): void {
      if (!open.delete(operation) || open.size > 0) return;
      for (const waiter of [...waiters]) waiter();
    },
    /** Settles once every operation has ended, or after `deadlineMs`; any number may wait. */
    ended(deadlineMs: number): Promise<void> {
      if (open.size === 0) return Promise.resolve();
      return new Promise<void>((done) => {
        const waiter = () => {
          clearTimeout(timer);
          waiters.delete(waiter);
          done();
        };
        const timer = setTimeout(waiter, deadlineMs);
        waiters.add(waiter);
      });
    },
  };
}

/** The key, checked again, was refused: revoked or expired (401) also closes the connection with 4401. */
function refused(operation: WebSocketOperation, { error }: KeyRefusal, finish: () => void, extra: ConnectionExtra) {
  operation.res.statusCode = error.status;
  finish();
  if (error.status === 401) closeAfterError(extra, CloseCode.Unauthorized, error.message);
  return [new ForwardedError({ message: error.message, extensions: { code: error.code } })];
}

const INTERNAL_ERROR = { message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } };

/**
 * graphql-ws's hooks. `connection_init` runs the edge's key check (the failed-authentication limit
 * and one point included); each `subscribe` runs it again on the connection's key (one point, and a
 * key revoked, expired or narrowed since is seen at once) and then runs through Yoga as a POST would,
 * its SSE events or JSON answer passed on as `next`, `error` and `complete`. One access-log line per
 * operation at its end, and one per refused connection.
 */
export function createWebSocketOperations(options: WebSocketsOptions, connections: ConnectionCounts) {
  const { fetchGraphQL, checkKey, accessLog, logger } = options;
  const open = createOpenOperations();

  /** Releases the operation once, however it ends: its own end, a refusal, a throw, or its socket's close. */
  function finish(extra: ConnectionExtra, operation: WebSocketOperation): void {
    if (!extra.operations.delete(operation)) return;
    operation.close();
    accessLog(operation, performance.now());
    open.delete(operation);
  }

  async function execute(extra: ConnectionExtra, operation: WebSocketOperation, payload: SubscribePayload) {
    const checked = await checkKey(operation, extra.key?.authorization ?? null);
    if (checked !== true) return refused(operation, checked, () => finish(extra, operation), extra);
    const response = await fetchGraphQL(URL_FOR_YOGA, requestOf(payload), { exchange: operation });
    operation.res.statusCode = response.status;
    if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      return argsOf(forwardedResults(response.body, () => finish(extra, operation)));
    }
    const result = (await response.json()) as ExecutionResult & { errors?: GraphQLFormattedError[] };
    finish(extra, operation);
    if (response.status === 401) closeUnauthorized(extra, result.errors);
    // Errors without `data`: the operation never ran (GraphQL spec §7.1.2), graphql-ws's `error`.
    if (!('data' in result) && result.errors?.length) return result.errors.map((error) => new ForwardedError(error));
    return argsOf(result);
  }

  async function run(extra: ConnectionExtra, payload: SubscribePayload) {
    const operation = new WebSocketOperation(extra.request, randomUUID());
    open.add(operation);
    extra.operations.add(operation);
    try {
      return await execute(extra, operation, payload);
    } catch (error) {
      logger.error({ err: error, reqId: operation.id }, 'a GraphQL operation over WebSocket failed');
      if (operation.res.statusCode < 500) operation.res.statusCode = 500;
      finish(extra, operation);
      return [new ForwardedError(INTERNAL_ERROR)];
    }
  }

  const hooks: ServerOptions<Record<string, unknown> | undefined, ConnectionExtra> = {
    onConnect: (ctx) => admitConnection(ctx, options, connections),
    // graphql-ws takes a subscribe only once the connection was acknowledged: it has a key.
    onSubscribe: (ctx, _id, payload) => run(ctx.extra, payload),
    subscribe: ({ rootValue }) => rootValue as AsyncGenerator<ExecutionResult> | ExecutionResult,
    // Yoga formatted every result already (masked errors included): sent as it is.
    onNext: (_ctx, _id, _payload, _args, result) => result,
  };

  return {
    hooks,
    ended: open.ended,
    /** The socket closed: every operation still on it ends (its slot, its access-log line). */
    connectionClosed(extra: ConnectionExtra): void {
      for (const operation of [...extra.operations]) finish(extra, operation);
    },
  };
}
