import type { ExecutionResult } from 'graphql';
import { type Plugin, processRegularResult } from 'graphql-yoga';
import type { ServerContext } from '../context.ts';
import {
  type GiveBack,
  GRAPHQL_VARY,
  type Revalidating,
  revalidate,
  type Validation,
} from '../http/conditional-get.ts';
import { answerAsYoga, negotiateAsYoga, type RegularAnswer, type RegularMediaType } from './yoga-behaviour.ts';

/** What a GraphQL GET's answer needs besides the result, on either path. */
export interface ConditionalRequest {
  ifNoneMatch: string | undefined;
  exchange: Revalidating;
  giveBack: GiveBack | undefined;
}

/**
 * A GraphQL GET's answer, the same whichever path ran it: a 200 without errors carries its ETag (and
 * may be kept by the browser, revalidated each time); one whose tag If-None-Match names is 304
 * without a body, its rate-limit point given back when a tag (not `*`) matched. An answer with
 * errors gets neither: it may be a passing failure (a database out of reach), nothing to poll
 * against, so it stays no-store.
 */
export function conditionalAnswer(
  answer: RegularAnswer,
  result: ExecutionResult,
  { ifNoneMatch, exchange, giveBack }: ConditionalRequest,
): RegularAnswer | Promise<RegularAnswer> {
  if (answer.status !== 200 || answer.body === null || result.errors?.length) return answer;
  const representation = { mediaType: answer.headers['Content-Type'] ?? '', body: answer.body };
  const checked = revalidate(ifNoneMatch, representation, GRAPHQL_VARY, { exchange, giveBack });
  const toAnswer = ({ notModified, headers }: Validation): RegularAnswer => {
    // RFC 9110 §15.4.5: a 304 carries what caches update (ETag, Cache-Control, Vary), no body metadata.
    if (notModified) return { status: 304, headers, body: null };
    return { ...answer, headers: { ...answer.headers, ...headers } };
  };
  return checked instanceof Promise ? checked.then(toAnswer) : toAnswer(checked);
}

/**
 * The same on Yoga's path: its regular result processor, wrapped for GETs, answers through
 * conditionalAnswer what the fast path answers (fast-path.ts). The processor is Yoga's choice
 * of media type; the wrapper must name it again, as negotiateAsYoga finds it.
 */
export function useConditionalGets(giveBack: GiveBack | undefined): Plugin<Record<string, never>, ServerContext> {
  return {
    onResultProcess({ request, resultProcessor, setResultProcessor, serverContext }) {
      if (request.method !== 'GET' || resultProcessor !== processRegularResult) return;
      const mediaType = negotiateAsYoga(request.headers.get('accept') ?? undefined) as RegularMediaType;
      const conditional = {
        ifNoneMatch: request.headers.get('if-none-match') ?? undefined,
        exchange: serverContext.exchange,
        giveBack,
      };
      setResultProcessor((result, fetchAPI) => {
        // Yoga sends a GET one operation: neither a batch nor a stream reaches the regular processor here.
        const single = result as ExecutionResult;
        const answered = conditionalAnswer(answerAsYoga(single, mediaType), single, conditional);
        const respond = ({ status, headers, body }: RegularAnswer) => new fetchAPI.Response(body, { status, headers });
        return answered instanceof Promise ? answered.then(respond) : respond(answered);
      }, mediaType);
    },
  };
}
