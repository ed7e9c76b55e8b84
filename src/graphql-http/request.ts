import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerContext } from '../context.ts';
import type { Exchange } from '../http/exchange.ts';
import { BodyTooLargeError, readBody } from '../http/read-body.ts';
import { sendError } from '../http/send-json.ts';
import type { GraphQLFastPath } from './fast-path.ts';
import { graphQLNegotiation } from './media-types.ts';
import {
  ACCEPTED_MEDIA_TYPES,
  graphQLUrlParams,
  POSTED_MEDIA_TYPES,
  type PostBody,
  type PostedBody,
  postBodyOf,
  takesParsedBody,
} from './yoga-behaviour.ts';

type Parsed = ({ ok: true } & PostedBody) | { ok: false; message: string };

/**
 * A GraphQL body as Yoga takes it: a JSON object already parsed (so Yoga does not parse it again), or
 * the bytes as they came, for other media types and JSON values that are not a non-empty object (Yoga
 * refuses those in its own words). JSON that does not parse gets a plain message: Yoga would echo the
 * SyntaxError object.
 */
export function parsedGraphQLBody(bodyKind: PostBody, bytes: Buffer): Parsed {
  if (bodyKind !== 'json') return { ok: true, kind: bodyKind, body: bytes };
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, message: 'The request body is not valid JSON: send a JSON object with a "query"' };
  }
  return { ok: true, kind: bodyKind, body: takesParsedBody(parsed) ? parsed : bytes };
}

type YogaListener = (req: IncomingMessage, res: ServerResponse, context: ServerContext) => unknown;

const NOT_ACCEPTABLE = {
  status: 406,
  code: 'NOT_ACCEPTABLE',
  message: `None of the media types in Accept can be answered: use one of ${ACCEPTED_MEDIA_TYPES}`,
  headers: { Accept: ACCEPTED_MEDIA_TYPES },
};
const UNSUPPORTED_MEDIA_TYPE = {
  status: 415,
  code: 'UNSUPPORTED_MEDIA_TYPE',
  message: `Send the body as one of ${POSTED_MEDIA_TYPES}`,
};

/**
 * /graphql after authentication: the edge reads POST bodies itself, under its limit; the fast path
 * answers the ordinary POSTs and GETs it can in a regular JSON type (fast-path.ts), and Yoga
 * gets the rest (streams included), with the parsed body (Yoga's own limiter is slower) and
 * the exchange. Requests Yoga would mishandle are answered here: an Accept it cannot serve
 * or a body it cannot read, URL-encoded parameters that are not JSON (yoga-behaviour.ts).
 */
export function createGraphQLRequests(yoga: YogaListener, maxBodyBytes: number, fastPath?: GraphQLFastPath) {
  const badRequest = (exchange: Exchange, message: string) =>
    sendError(exchange.res, 'graphql', { status: 400, code: 'BAD_REQUEST', message });

  return async (exchange: Exchange): Promise<unknown> => {
    const { req, res } = exchange;
    const answer = graphQLNegotiation.answerFor(req.headers.accept);
    if (answer === 'none') return sendError(res, 'graphql', NOT_ACCEPTABLE);
    if (req.method === 'POST') {
      const bodyKind = postBodyOf(req.headers['content-type']);
      if (!bodyKind) return sendError(res, 'graphql', UNSUPPORTED_MEDIA_TYPE);
      let bytes: Buffer;
      try {
        bytes = await readBody(req, maxBodyBytes);
      } catch (error) {
        if (!(error instanceof BodyTooLargeError)) throw error;
        // The unread rest of the body cannot carry another request on this connection: close it.
        const tooLarge = { status: 413, code: 'PAYLOAD_TOO_LARGE', message: error.message };
        return sendError(res, 'graphql', tooLarge, { Connection: 'close' });
      }
      if (bytes.length === 0)
        return badRequest(exchange, 'The request body is empty: send a JSON object with a "query"');
      if (bodyKind === 'form') {
        const form = graphQLUrlParams(bytes.toString('utf8'));
        if (!form.ok) return badRequest(exchange, form.message);
      }
      const parsed = parsedGraphQLBody(bodyKind, bytes);
      if (!parsed.ok) return badRequest(exchange, parsed.message);
      const answered = answer !== 'stream' && fastPath?.post(exchange, parsed, answer);
      if (answered) return answered;
      // With the stream consumed, @whatwg-node/server builds the fetch Request from `req.body`.
      (req as IncomingMessage & { body?: unknown }).body = parsed.body;
    }
    if (req.method === 'GET') {
      const url = graphQLUrlParams(exchange.query);
      if (!url.ok) return badRequest(exchange, url.message);
      const answered = answer !== 'stream' && fastPath?.get(exchange, url.params, answer);
      if (answered) return answered;
    }
    return yoga(req, res, { exchange });
  };
}
