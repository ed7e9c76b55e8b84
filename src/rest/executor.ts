import { type ExecutionResult, GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import type { ExecutionExchange } from '../context.ts';
import type { CompiledOperation, DirectExecution } from '../graphql/direct-execution.ts';
import { type GiveBack, REST_VARY, revalidate, type Validation } from '../http/conditional-get.ts';
import type { Exchange } from '../http/exchange.ts';
import { ClientClosedError } from '../http/read-body.ts';
import { JSON_TYPE, sendError, sendJsonText, sendNotModified } from '../http/send-json.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { REST_OPERATIONS, type RestOperation, type RestRequest, type RestResult } from './contract-operations.ts';
import { createDeprecationTracker } from './deprecation.ts';
import { invalidParameter, RestError, restErrorFromGraphQL, restErrorFromGraphQLErrors } from './http-errors.ts';
import { readJsonBody } from './request-body.ts';

export interface RestExecutorOptions {
  execution: DirectExecution;
  basePath: string;
  maxBodyBytes: number;
  logger: Logger;
  metrics: Metrics;
  /** Gives a 304's rate-limit point back (rate-limits.ts revalidated); undefined with no limits. */
  giveBack?: GiveBack;
}

function decodePathParams(raw: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  let decoded: Record<string, string> | undefined;
  for (const name in raw) {
    const value = raw[name] as string;
    // Most ids are digits: nothing to decode, and no copy of the parameters.
    if (!value.includes('%')) continue;
    decoded ??= { ...raw };
    try {
      decoded[name] = decodeURIComponent(value);
    } catch {
      throw invalidParameter(name, 'is not valid percent-encoding');
    }
  }
  return decoded ?? raw;
}

/**
 * A GET's 200 with its ETag, or 304 when If-None-Match names it (conditional-get.ts). The tag covers
 * the answer's own headers too: a full last page gains a `Link` when a pet is added after it.
 */
function sendValidated(exchange: Exchange, answer: RestResult, giveBack: GiveBack | undefined) {
  const representation = { mediaType: JSON_TYPE, body: answer.json, headers: answer.headers };
  const checked = revalidate(exchange.req.headers['if-none-match'], representation, REST_VARY, { exchange, giveBack });
  const send = ({ notModified, headers: tagHeaders }: Validation) => {
    const headers = { ...answer.headers, ...tagHeaders };
    if (notModified) sendNotModified(exchange.res, headers);
    else sendJsonText(exchange.res, answer.status, answer.json, headers);
  };
  return checked instanceof Promise ? checked.then(send) : send(checked);
}

/**
 * Runs the contract's operations: each a pre-parsed operation of the GraphQL schema, compiled once
 * and run by the same direct execution as the GraphQL fast path (same context, executor, rules and
 * masking as Yoga's envelop), and written straight to node:http, with no fetch Request/Response in
 * between. Business rules live in the schema.
 */
export function createRestExecutor(options: RestExecutorOptions) {
  const { execution, basePath, maxBodyBytes, logger, metrics, giveBack } = options;
  const trackDeprecatedUse = createDeprecationTracker(logger);
  const compiled = new Map(REST_OPERATIONS.map((operation) => [operation, execution.compile(operation.document)]));

  function toRestError(error: unknown, operation: RestOperation, reqId: string): RestError {
    if (error instanceof RestError) return error;
    if (error instanceof GraphQLError) return restErrorFromGraphQL(error, operation.restField);
    logger.error({ err: error, reqId }, 'unexpected error in the REST executor');
    return new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.');
  }

  function answerOf(operation: RestOperation, result: ExecutionResult, request: RestRequest) {
    if (result.errors?.length) {
      const { restReason } = operation;
      const reason = restReason && ((field: string, said: string) => restReason(field, said, request));
      throw restErrorFromGraphQLErrors(result.errors, operation.restField, reason);
    }
    if (!result.data) throw new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.');
    return operation.respond(result.data, request);
  }

  /**
   * The operation's answer to a request already authenticated and parsed, or the RestError it ends in
   * (thrown): what REST writes, and what an MCP tool call returns.
   */
  async function answer(operation: RestOperation, exchange: ExecutionExchange, request: RestRequest) {
    try {
      const compiledOperation = compiled.get(operation) as CompiledOperation;
      const result = await execution.run(compiledOperation, exchange, operation.variables(request));
      return answerOf(operation, result, request);
    } catch (error) {
      throw toRestError(error, operation, exchange.id);
    }
  }

  /** Answers one authenticated request for `operation`. */
  async function run(operation: RestOperation, exchange: Exchange): Promise<void> {
    if (operation.deprecated) {
      trackDeprecatedUse(operation.operationId, exchange.keyId, exchange.id);
      metrics.countDeprecatedUse(operation.operationId, exchange.keyId);
    }
    try {
      const request: RestRequest = {
        pathParams: decodePathParams(exchange.params),
        query: new URLSearchParams(exchange.query),
        body: operation.hasBody ? await readJsonBody(exchange.req, maxBodyBytes) : undefined,
        basePath,
      };
      const result = await answer(operation, exchange, request);
      if (operation.method !== 'GET' || result.status !== 200)
        return sendJsonText(exchange.res, result.status, result.json, result.headers);
      const refunding = sendValidated(exchange, result, giveBack);
      if (refunding) await refunding;
    } catch (error) {
      // A client that left mid-body is in the access log already; there is no one to answer.
      if (error instanceof ClientClosedError) return void exchange.res.destroy();
      sendError(exchange.res, 'rest', toRestError(error, operation, exchange.id));
    }
  }

  return { run, answer };
}

export type RestExecutor = ReturnType<typeof createRestExecutor>;
