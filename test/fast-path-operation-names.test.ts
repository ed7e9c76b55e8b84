import { randomUUID } from 'node:crypto';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { compileOperation } from '../src/graphql/compiled-operation.ts';
import { schema } from '../src/graphql/schema/index.ts';
import { createCompiledOperations } from '../src/graphql-http/compiled-operations.ts';
import { sampleIn } from './support/metric-sample.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

// A client may repeat one document Yoga has found valid with a new operationName each time: each
// such request must get Yoga's answer, and the fast path must keep nothing for names the document
// does not have (else one document's entry grows with every request).

const server = useTestServer();

const TWO = 'query First { pets(limit: 1) { id } } query Second { pets(limit: 2) { name } }';

const fastPathCount = async () => sampleIn(await server.metrics.scrape.text(), 'graphql_fast_path_requests_total');

async function post(query: string, operationName: string) {
  return server.request
    .post('/graphql')
    .set(AUTH)
    .set('Content-Type', 'application/json')
    .send({ query, operationName });
}

const byGet = (query: string, operationName: string) =>
  server.request.get(`/graphql?${new URLSearchParams({ query, operationName })}`).set(AUTH);

/** What Yoga's answers to two unknown names share: all of it, since it does not echo the name. */
const shapeOf = (response: { status: number; headers: Record<string, string>; text: string }) => ({
  status: response.status,
  contentType: response.headers['content-type'],
  body: response.text,
});

describe('when a client repeats a cached document with a new unknown operationName each time', () => {
  it('then each request gets the answer Yoga gives, and the fast path still runs the real operations', async () => {
    const query = `${TWO}\n# names ${randomUUID()}`;
    await post(query, 'First');
    const before = await fastPathCount();
    const first = await post(query, 'First');
    expect(await fastPathCount()).toBe(before + 1);

    const reference = await post(query, 'Nobody_reference_');
    expect(reference.body.errors).toMatchObject([{ extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } }]);
    const expected = shapeOf(reference);

    const flooded = await fastPathCount();
    for (let i = 0; i < 60; i++) {
      // Long names too: the body limit (POST) and the URL (GET) are what bound one name.
      const name = `Nobody_${i}_${'x'.repeat(i % 10 === 0 ? 4_000 : i)}`;
      const answer = i % 2 === 0 ? await post(query, name) : await byGet(query, name);
      expect(shapeOf(answer), name.slice(0, 20)).toEqual(expected);
    }
    expect(await fastPathCount()).toBe(flooded);

    const again = await post(query, 'First');
    expect(await fastPathCount()).toBe(flooded + 1);
    expect({ status: again.status, body: again.body }).toEqual({ status: first.status, body: first.body });
  });
});

/** The fast path's cache over the real compile, counting what it compiles. */
function compiledOperations() {
  const compiled: (string | undefined)[] = [];
  const operations = createCompiledOperations({
    compile: (document, operationName) => {
      compiled.push(operationName);
      return compileOperation(schema, document, operationName, undefined);
    },
  });
  return { ...operations, compiled };
}

describe('the compiled operations the fast path keeps per document', () => {
  it('keep nothing for a name the document does not have, however many are asked for', () => {
    const { operationOf, keptFor, compiled } = compiledOperations();
    const document = parse(TWO);
    for (let i = 0; i < 1_000; i++) expect(operationOf(document, `Nobody${i}`)).toBeNull();
    // Without a name, a document of several operations names none: left to Yoga, kept nowhere.
    expect(operationOf(document, undefined)).toBeNull();
    expect(keptFor(document)).toBe(0);
    expect(compiled).toEqual([]);

    const firstOne = operationOf(document, 'First');
    expect(firstOne?.name).toBe('First');
    expect(operationOf(document, 'Second')?.name).toBe('Second');
    expect(operationOf(document, 'First')).toBe(firstOne);
    expect(keptFor(document)).toBe(2);
    expect(compiled).toEqual(['First', 'Second']);
  });

  it('keep a document of one operation under its name and without one, each compiled once', () => {
    const { operationOf, keptFor, compiled } = compiledOperations();
    const document = parse('query One { pets(limit: 1) { id } }');
    const unnamed = operationOf(document, undefined);
    expect(unnamed?.name).toBe('One');
    expect(operationOf(document, undefined)).toBe(unnamed);
    expect(operationOf(document, 'One')?.name).toBe('One');
    expect(operationOf(document, 'one')).toBeNull();
    expect(keptFor(document)).toBe(2);
    expect(compiled).toEqual([undefined, 'One']);
  });

  it('keep the refusal of an operation the document has but the compiler refuses, so it is tried once', () => {
    const { operationOf, keptFor, compiled } = compiledOperations();
    const document = parse('query Wrong { nope }');
    expect(operationOf(document, 'Wrong')).toBeNull();
    expect(operationOf(document, 'Wrong')).toBeNull();
    expect(keptFor(document)).toBe(1);
    expect(compiled).toEqual(['Wrong']);
  });
});
