import { randomUUID } from 'node:crypto';
import { type ExecutionArgs, type ExecutionResult, type GraphQLFormattedError, parse } from 'graphql';
import { CloseCode, type ServerOptions, type SubscribePayload } from 'graphql-ws';
import type { ServerContext } from '../context.ts';
import { schema } from '../graphql/schema/index.ts';
import { GRAPHQL_ENDPOINT } from '../yoga.ts';
import type { ConnectionContext, ConnectionExtra, WebSocketsOptions } from './websocket.ts';
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

/** `connection_init`: the edge's key check on connectionParams; a refusal closes with its reason. */
async function admitConnection(
  ctx: ConnectionContext,
  { checkKey, accessLog }: Pick<WebSocketsOptions, 'checkKey' | 'accessLog'>,
): Promise<boolean> {
  const { request, socket } = ctx.extra;
  const attempt = new WebSocketOperation(request, randomUUID());
  const checked = await checkKey(attempt, authorizationOf(ctx.connectionParams));
  if (checked === true) {
    const { keyId, scopes, arbitraryDocuments, clientAddress } = attempt;
    ctx.extra.key = { keyId, scopes, arbitraryDocuments, clientAddress };
    return true;
  }
  const { status, message } = checked.error;
  attempt.res.statusCode = status;
  accessLog(attempt, performance.now());
  // 4401 and 4429 are final for graphql-ws's client (4403, graphql-ws's own refusal, is retried).
  const code = status === 401 ? CloseCode.Unauthorized : CloseCode.TooManyInitialisationRequests;
  socket.close(code, closeReason(status === 401 && !authorizationOf(ctx.connectionParams) ? MISSING_KEY : message));
  return false;
}

/** Operations under way, so that a stopping instance can wait for their `complete`. */
function createOpenOperations() {
  const open = new Set<WebSocketOperation>();
  let allEnded: (() => void) | undefined;
  return {
    add: (operation: WebSocketOperation) => void open.add(operation),
    delete(operation: WebSocketOperation): void {
      if (open.delete(operation) && open.size === 0) allEnded?.();
    },
    /** Settles once every operation has ended, or after `deadlineMs`. */
    ended(deadlineMs: number): Promise<void> {
      if (open.size === 0) return Promise.resolve();
      return new Promise<void>((done) => {
        const timer = setTimeout(done, deadlineMs);
        allEnded = () => {
          clearTimeout(timer);
          done();
        };
      });
    },
  };
}

/**
 * graphql-ws's hooks. `connection_init` runs the edge's key check (the failed-authentication limit
 * and one point included); each `subscribe` takes a point and then runs through Yoga as a POST would,
 * its SSE events or JSON answer passed on as `next`, `error` and `complete`. One access-log line per
 * operation at its end, and one per refused connection.
 */
export function createWebSocketOperations(options: WebSocketsOptions) {
  const { fetchGraphQL, rateLimits, metrics, accessLog } = options;
  const open = createOpenOperations();

  function finish(operation: WebSocketOperation): void {
    operation.close();
    accessLog(operation, performance.now());
    open.delete(operation);
  }

  async function run(extra: ConnectionExtra, payload: SubscribePayload) {
    const operation = new WebSocketOperation(extra.request, randomUUID(), extra.key);
    open.add(operation);
    const refusal = await rateLimits.request(operation);
    if (refusal) {
      metrics.countRateLimited('per_key');
      operation.res.statusCode = 429;
      finish(operation);
      return [new ForwardedError({ message: refusal.message, extensions: { code: 'RATE_LIMITED' } })];
    }
    const response = await fetchGraphQL(URL_FOR_YOGA, requestOf(payload), { exchange: operation });
    operation.res.statusCode = response.status;
    if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      return argsOf(forwardedResults(response.body, () => finish(operation)));
    }
    const result = (await response.json()) as ExecutionResult & { errors?: GraphQLFormattedError[] };
    finish(operation);
    // Errors without `data`: the operation never ran (GraphQL spec §7.1.2), graphql-ws's `error`.
    if (!('data' in result) && result.errors?.length) return result.errors.map((error) => new ForwardedError(error));
    return argsOf(result);
  }

  const hooks: ServerOptions<Record<string, unknown> | undefined, ConnectionExtra> = {
    onConnect: (ctx) => admitConnection(ctx, options),
    // graphql-ws takes a subscribe only once the connection was acknowledged: it has a key.
    onSubscribe: (ctx, _id, payload) => run(ctx.extra, payload),
    subscribe: ({ rootValue }) => rootValue as AsyncGenerator<ExecutionResult> | ExecutionResult,
    // Yoga formatted every result already (masked errors included): sent as it is.
    onNext: (_ctx, _id, _payload, _args, result) => result,
  };

  return { hooks, ended: open.ended };
}
