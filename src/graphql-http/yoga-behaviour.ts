import type { ServerResponse } from 'node:http';
import type { ExecutionResult, OperationTypeNode } from 'graphql';
import { type FetchAPI, processRegularResult } from 'graphql-yoga';
import { sendNotModified } from '../http/send-json.ts';

/**
 * Everything the edge and the GraphQL fast path copy from graphql-yoga and the libraries under it,
 * so that they answer what Yoga would, in one place to re-check on an upgrade. Each rule names the
 * file it mirrors (paths under the package's esm/). test/yoga-behaviour.test.ts fails when an
 * installed version differs from these; test/graphql-fast-path.test.ts compares each rule's answers
 * with Yoga's for the same requests.
 */
export const MIRRORED_VERSIONS = {
  'graphql-yoga': '5.24.1',
  '@whatwg-node/server': '0.11.0',
  '@envelop/graphql-jit': '11.2.1',
} as const;

/** Yoga's regular result processor's media types, in its order. */
export type RegularMediaType = 'application/graphql-response+json' | 'application/json';
/** What /graphql answers in, by Accept: a regular JSON type, a stream (Yoga's), or nothing (406). */
export type GraphQLAnswer = RegularMediaType | 'stream' | 'none';

// graphql-yoga plugins/use-result-processor.js: the processors' media types, streams first.
const REGULAR: readonly (readonly [string, string, RegularMediaType])[] = [
  ['application', 'graphql-response+json', 'application/graphql-response+json'],
  ['application', 'json', 'application/json'],
];
const STREAMS: readonly (readonly [string, string])[] = [
  ['text', 'event-stream'],
  ['multipart', 'mixed'],
];

/** What a 406 says we answer in: one fixed list (Yoga's processors in its order), whatever the client asked for. */
export const ACCEPTED_MEDIA_TYPES = [...STREAMS, ...REGULAR].map(([type, subtype]) => `${type}/${subtype}`).join(', ');

const matches = (
  type: string | undefined,
  subtype: string | undefined,
  [wantedType, wantedSubtype]: readonly string[],
) => (type === '*' || type === wantedType) && (subtype === '*' || subtype === wantedSubtype);

/**
 * graphql-yoga plugins/result-processor/accept.js with use-result-processor.js: the Accept list
 * without spaces, lower-cased, each type with a charset other than utf-8 dropped, q-values ignored,
 * `*` matching anything, processors tried streams first and the last match winning. So the regular
 * processor wins whenever any entry matches it, a stream only when nothing regular does. An absent
 * or empty Accept is `*`/`*`, whose last match is application/json.
 */
export function negotiateAsYoga(accept: string | undefined): GraphQLAnswer {
  if (!accept || accept === '*/*') return 'application/json';
  let answer: GraphQLAnswer = 'none';
  for (const entry of accept.replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [type, subtype] = mediaType.split('/');
    let regular: RegularMediaType | undefined;
    for (const candidate of REGULAR) if (matches(type, subtype, candidate)) regular = candidate[2];
    if (regular) return regular;
    if (answer === 'none' && STREAMS.some((candidate) => matches(type, subtype, candidate))) answer = 'stream';
  }
  return answer;
}

// graphql-yoga server.js: its request parsers and their content types (multipart is off: yoga.ts).
const POST_BODIES = new Map([
  ['application/json', 'json'],
  ['application/graphql+json', 'json'],
  ['application/x-www-form-urlencoded', 'form'],
  ['application/graphql', 'graphql'],
] as const);
export type PostBody = 'json' | 'form' | 'graphql';
/** A POST's body as the edge hands it on: which of Yoga's parsers reads it, and the body itself. */
export interface PostedBody {
  kind: PostBody;
  body: unknown;
}

/** POST bodies Yoga reads, for the edge's 415. */
export const POSTED_MEDIA_TYPES = [...POST_BODIES.keys()].join(', ');

/**
 * graphql-yoga plugins/request-parser/utils.js isContentTypeMatch: the first of a list, compared
 * exactly, parameters aside (`Application/JSON` matches nothing). Undefined: Yoga reads no body, and
 * its 415 has no body and no code.
 */
export function postBodyOf(contentType: string | undefined): PostBody | undefined {
  const first = contentType?.split(',')[0] ?? '';
  const semicolon = first.indexOf(';');
  return (POST_BODIES as Map<string, PostBody>).get(semicolon === -1 ? first : first.slice(0, semicolon));
}

/** @whatwg-node/server utils.js normalizeNodeRequest: a parsed `req.body` is used only when it has keys. */
export const takesParsedBody = (parsed: unknown): boolean =>
  typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0;

/** A GraphQL request's parameters from a URL-encoded query string, or why they cannot be read. */
export type UrlParams = { ok: true; params: Record<string, unknown> } | { ok: false; message: string };

/**
 * graphql-yoga plugins/request-parser/utils.js handleURLSearchParams (empty values are absent), with
 * `documentId`, and without its throw: Yoga's JSON.parse of `variables` or `extensions` escapes as an
 * unexpected error (500); here it is the client's mistake, for the edge to answer 400.
 */
export function graphQLUrlParams(queryString: string): UrlParams {
  const search = new URLSearchParams(queryString);
  const params: Record<string, unknown> = {};
  for (const name of ['query', 'documentId', 'operationName']) {
    const value = search.get(name);
    if (value) params[name] = value;
  }
  for (const name of ['variables', 'extensions']) {
    const value = search.get(name);
    if (!value) continue;
    try {
      params[name] = JSON.parse(value);
    } catch {
      return { ok: false, message: `The "${name}" parameter is not valid JSON: send a URL-encoded JSON object` };
    }
  }
  return { ok: true, params };
}

// graphql-yoga request-validation/use-check-graphql-query-params.js: the parameters it takes without
// a word, with `documentId` (yoga.ts extraParamNames); `extensions` is left to Yoga and its plugins.
const ORDINARY_PARAMS = new Set(['query', 'documentId', 'variables', 'operationName']);

/** Parameters Yoga's checks pass untouched: only ordinary names, variables an object, operationName a string. */
export function hasOrdinaryParams(params: Record<string, unknown>): boolean {
  for (const key in params) if (!ORDINARY_PARAMS.has(key) && params[key] != null) return false;
  const { variables, operationName } = params;
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return false;
  return operationName == null || typeof operationName === 'string';
}

/** graphql-yoga request-validation/use-prevent-mutation-via-get.js: GET runs queries only (else 405). */
export const runsByGet = (type: OperationTypeNode): boolean => type === 'query';

/** What Yoga's result processor makes of a result: captured instead of a fetch Response. */
class CapturedResponse {
  constructor(
    readonly body: string,
    readonly init: { status?: number; headers?: Record<string, string> },
  ) {}
}
const CAPTURE = { Response: CapturedResponse } as unknown as FetchAPI;

/** An answer to a regular result: Yoga's, or made from it (a 304 has no body). */
export interface RegularAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

/**
 * A result as Yoga answers it: Yoga's own processRegularResult decides status, headers and body.
 * `stringify` is the operation's graphql-jit serialiser, which @envelop/graphql-jit (esm/index.js)
 * puts on the result for Yoga's processor to use (on Yoga's path the result carries it already).
 */
export function answerAsYoga(
  result: ExecutionResult,
  mediaType: RegularMediaType,
  stringify?: (result: ExecutionResult) => string,
): RegularAnswer {
  const processed = processRegularResult(stringify ? { ...result, stringify } : result, CAPTURE, mediaType);
  const { body, init } = processed as unknown as CapturedResponse;
  return { status: init.status ?? 200, headers: init.headers ?? {}, body };
}

/** Writes an answer on node:http in one writeHead, with its length. */
export function writeAnswer(res: ServerResponse, { status, headers, body }: RegularAnswer): void {
  // Only a 304 has no body (conditional-gets.ts): written as REST writes its own.
  if (body === null) return void sendNotModified(res, headers);
  res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
