import fc from 'fast-check';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { createGraphQLNegotiation, type GraphQLAnswer, graphQLNegotiation } from '../src/graphql-http/media-types.ts';

// The edge decides what /graphql answers in before Yoga runs anything: 406, a stream (Yoga's to
// answer) or a regular JSON type (the fast path's). Each decision must be the one Yoga makes, so
// they are held here to what a plain Yoga answers the same Accept header with.

const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { ok: Boolean }', resolvers: { Query: { ok: () => true } } }),
  logging: false,
  // The service serves GraphiQL elsewhere; here a GET that asks for HTML is a GraphQL request.
  graphiql: false,
});

/** What Yoga answered an Accept header with, in the negotiation's terms. */
async function yogaAnswer(accept: string | undefined): Promise<GraphQLAnswer> {
  const headers: Record<string, string> = accept === undefined ? {} : { accept };
  const response = await yoga.fetch('http://yoga/graphql?query=%7Bok%7D', { headers });
  await response.arrayBuffer();
  if (response.status === 406) return 'none';
  const mediaType = response.headers.get('content-type')?.split(';')[0] ?? '';
  if (mediaType === 'text/event-stream' || mediaType === 'multipart/mixed') return 'stream';
  return mediaType as GraphQLAnswer;
}

const TYPES = ['application', 'APPLICATION', 'text', 'multipart', '*', 'x', ''];
const SUBTYPES = ['json', 'JSON', 'graphql-response+json', 'event-stream', 'mixed', '*', 'html', 'json/extra', ''];
const PARAMETERS = ['', ';q=0.9', ';q=0', ';charset=utf-8', ';charset=UTF-8', ';charset=latin1', ' ; charset = utf-8'];
const SEPARATORS = [',', ', ', ' ,\t', ',,'];

/** Accept headers built of the parts that decide Yoga's choice, and some of junk. */
const acceptHeader = fc.oneof(
  fc
    .array(
      fc
        .tuple(fc.constantFrom(...TYPES), fc.constantFrom(...SUBTYPES), fc.constantFrom(...PARAMETERS))
        .map(([type, subtype, parameters]) => `${type}/${subtype}${parameters}`),
      { minLength: 1, maxLength: 5 },
    )
    .chain((entries) => fc.constantFrom(...SEPARATORS).map((separator) => entries.join(separator))),
  fc.string({ maxLength: 40 }),
);

describe('what /graphql answers in, by Accept', () => {
  it.each([
    undefined,
    '',
    '*/*',
    'application/json',
    'application/graphql-response+json',
    'application/graphql-response+json, application/json;q=0.9',
    'text/html, application/graphql-response+json',
    'application/*',
    'APPLICATION/GRAPHQL-RESPONSE+JSON',
    'application/json;charset=latin1, application/graphql-response+json',
    'text/event-stream',
    'multipart/mixed',
    'text/event-stream, application/json',
    'text/*',
    'text/html',
    'x/y, x/z',
  ])('decides Accept %j as Yoga does', async (accept) => {
    expect(graphQLNegotiation.answerFor(accept)).toBe(await yogaAnswer(accept));
  });

  it('decides generated Accept headers as Yoga does (fixed seed)', async () => {
    const seen = new Set<GraphQLAnswer>();
    await fc.assert(
      fc.asyncProperty(acceptHeader, async (accept) => {
        const answer = graphQLNegotiation.answerFor(accept);
        expect(answer).toBe(await yogaAnswer(accept));
        seen.add(answer);
      }),
      { seed: 28, numRuns: 600 },
    );
    // A corpus that never reached one of the answers would not hold that one to Yoga's.
    expect([...seen].sort()).toEqual(['application/graphql-response+json', 'application/json', 'none', 'stream']);
  });
});

describe('the Accept headers it remembers', () => {
  it('are at most its limit however many distinct ones come, and still answered right after', () => {
    const negotiation = createGraphQLNegotiation({ maxEntries: 8, maxLength: 64 });
    for (let index = 0; index < 1_000; index++) negotiation.answerFor(`x/y${index}, application/json`);
    expect(negotiation.remembered).toBe(8);
    expect(negotiation.answerFor('x/y3, application/json')).toBe('application/json');
    expect(negotiation.answerFor('x/y3')).toBe('none');
    expect(negotiation.remembered).toBe(8);
  });

  it('leaves out headers over its length limit, and still answers them', () => {
    const negotiation = createGraphQLNegotiation({ maxEntries: 8, maxLength: 64 });
    const long = `${'x/y,'.repeat(100)}text/event-stream`;
    expect(negotiation.answerFor(long)).toBe('stream');
    expect(negotiation.remembered).toBe(0);
    negotiation.answerFor('application/graphql-response+json');
    expect(negotiation.remembered).toBe(1);
  });

  it('remember one entry for a header sent again, and none for an absent Accept or */*', () => {
    const negotiation = createGraphQLNegotiation({ maxEntries: 8, maxLength: 64 });
    for (const accept of [undefined, '', '*/*', 'text/html', 'text/html']) negotiation.answerFor(accept);
    expect(negotiation.remembered).toBe(1);
  });

  it('are bounded in the service too: 10,000 distinct headers leave at most 100', () => {
    for (let index = 0; index < 10_000; index++) graphQLNegotiation.answerFor(`x/z${index}`);
    expect(graphQLNegotiation.remembered).toBeLessThanOrEqual(100);
  });
});
