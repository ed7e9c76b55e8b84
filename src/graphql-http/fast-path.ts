import type { DirectExecution } from '../graphql/direct-execution.ts';
import type { TrustedDocumentsMode } from '../graphql/trusted-documents.ts';
import type { ValidatedDocuments } from '../graphql/validated-documents.ts';
import type { GiveBack } from '../http/conditional-get.ts';
import type { Exchange } from '../http/exchange.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { createCompiledOperations } from './compiled-operations.ts';
import { conditionalAnswer } from './conditional-gets.ts';
import { createFastRequests } from './fast-request.ts';
import {
  answerAsYoga,
  type PostedBody,
  type RegularAnswer,
  type RegularMediaType,
  runsByGet,
  writeAnswer,
} from './yoga-behaviour.ts';

export interface GraphQLFastPathOptions {
  execution: DirectExecution;
  documents: ValidatedDocuments;
  metrics: Metrics;
  trustedDocuments: TrustedDocumentsMode;
  /** The text of a published document this instance has read already; undefined for any other id. */
  publishedText: (id: string) => string | undefined;
  /** Gives a 304's rate-limit point back, as on Yoga's path (conditional-gets.ts). */
  giveBack?: GiveBack;
}

function writeAnswered(exchange: Exchange, answer: RegularAnswer): true {
  writeAnswer(exchange.res, answer);
  return true;
}

/**
 * GraphQL requests that Yoga would answer the ordinary way, answered without it: a POST of a JSON
 * body or a GET, whose parameters Yoga and the trusted-documents gate would pass untouched
 * (fast-request.ts), whose document Yoga has found valid before, asking for a JSON answer.
 * They run through the direct execution (the same context, executor and rules as Yoga's plugins)
 * and are answered by Yoga's own result processor. Every rule copied from Yoga is in
 * yoga-behaviour.ts.
 * Anything else returns false, and Yoga answers it. `test/graphql-fast-path.test.ts` holds its
 * answers to Yoga's.
 */
export function createGraphQLFastPath(options: GraphQLFastPathOptions) {
  const { execution, metrics, giveBack } = options;
  const requestOf = createFastRequests(options);
  const { operationOf } = createCompiledOperations(execution);

  /** `params`: a POST's parsed body, or a GET's query string as Yoga reads it. */
  function tryFastPath(exchange: Exchange, params: unknown, get: boolean, mediaType: RegularMediaType) {
    if (typeof params !== 'object' || params === null) return false;
    const request = requestOf(exchange, params as Record<string, unknown>);
    const operation = request && operationOf(request.document, request.operationName);
    if (!request || !operation || (get && !runsByGet(operation.type))) return false;
    // As the trusted-documents gate does: metrics and the access log name the document it ran by.
    exchange.documentId = request.documentId;
    metrics.countFastPathRequest();
    return Promise.resolve(execution.run(operation, exchange, request.variables)).then((result) => {
      const outcome = result.errors?.length ? 'error' : 'success';
      metrics.countGraphQLOperation(operation.name, operation.type, outcome, exchange.documentId);
      const answer = answerAsYoga(result, mediaType, operation.stringify);
      // A GET's answer is conditional, as on Yoga's path (conditional-gets.ts).
      const ifNoneMatch = exchange.req.headers['if-none-match'];
      const answered = get ? conditionalAnswer(answer, result, { ifNoneMatch, exchange, giveBack }) : answer;
      if (answered instanceof Promise) return answered.then((notModified) => writeAnswered(exchange, notModified));
      return writeAnswered(exchange, answered);
    });
  }

  return {
    /** A POST: only a body Yoga parses as JSON. Answers and returns a promise of true, or false for Yoga. */
    post(exchange: Exchange, posted: PostedBody, mediaType: RegularMediaType): false | Promise<true> {
      if (posted.kind !== 'json') return false;
      return tryFastPath(exchange, posted.body, false, mediaType);
    },
    /** A GET: its query string as Yoga reads it (yoga-behaviour.ts graphQLUrlParams). */
    get(exchange: Exchange, params: Record<string, unknown>, mediaType: RegularMediaType): false | Promise<true> {
      return tryFastPath(exchange, params, true, mediaType);
    },
  };
}

export type GraphQLFastPath = ReturnType<typeof createGraphQLFastPath>;
