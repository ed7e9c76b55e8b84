// First, before anything loads the MongoDB driver: tracing on in this process, its spans in memory.
import './support/traced-process.ts';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import type { PetRepository } from '../src/pets/pet-repository.ts';
import { ERROR_LEVEL, linesDuring } from './support/capturing-logger.ts';
import { executeGraphQL, invalidVariables } from './support/graphql-client.ts';
import { CreatePetDocument, PetDocument, PetsDocument } from './support/operations.ts';
import { AUTH, useTestServer } from './support/test-server.ts';
import {
  callerTrace,
  childrenOf,
  finishedSpans,
  idOf,
  parentIdOf,
  requestTrace,
  spansOf,
  testTracing,
  tracedCapturingLogger,
} from './support/tracing.ts';

/** A pet whose read has a bug: the resolver below throws what a real bug throws. */
const BUGGY_PET_ID = 999_999_001;
const BUG = "Cannot read properties of undefined (reading 'name')";
const withABug = (pets: PetRepository): PetRepository => ({
  create: (newPet, options) => pets.create(newPet, options),
  allocateId: (options) => pets.allocateId(options),
  findById: (id) => (id === BUGGY_PET_ID ? Promise.reject(new TypeError(BUG)) : pets.findById(id)),
  listPage: (query) => pets.listPage(query),
  highestId: () => pets.highestId(),
  readAfter: (afterId, limit) => pets.readAfter(afterId, limit),
});

const { logger, lines } = tracedCapturingLogger();
const server = useTestServer({
  logger,
  tracer: testTracing.tracer,
  wrapStores: (stores) => ({ ...stores, pets: withABug(stores.pets) }),
});

async function restPet(name: string): Promise<{ id: number }> {
  const created = await server.request.post('/v1/pets').set(AUTH).send({ name, categoryId: 4 });
  expect(created.status).toBe(201);
  return created.body as { id: number };
}

/** What a face's execute span looks like, without what differs by nature (ids, times, the operation's name). */
function shapeBelow(spans: ReadableSpan[], execute: ReadableSpan) {
  return {
    name: execute.name,
    type: execute.attributes['graphql.operation.type'],
    database: childrenOf(spans, execute).map((span) => ({
      name: span.name,
      system: span.attributes['db.system.name'],
      children: childrenOf(spans, span).length,
    })),
  };
}

describe('when a request arrives with a traceparent, then it is one trace under the caller', () => {
  it('REST GET /v1/pets/{petId}: server span named by route, execute below it, MongoDB below that', async () => {
    const pet = await restPet('Traced');
    const caller = callerTrace();
    const response = await server.request.get(`/v1/pets/${pet.id}`).set(AUTH).set('traceparent', caller.traceparent);
    expect(response.status).toBe(200);

    const { server: span, spans } = await requestTrace(caller.traceId);
    expect(span).toMatchObject({ name: 'GET /v1/pets/{petId}', kind: SpanKind.SERVER });
    expect(parentIdOf(span)).toBe(caller.spanId);
    expect(span.attributes).toMatchObject({
      'http.route': '/v1/pets/{petId}',
      'http.request.method': 'GET',
      'http.response.status_code': 200,
    });
    const [execute, ...nothingElse] = childrenOf(spans, span);
    expect(nothingElse).toEqual([]);
    expect(execute).toMatchObject({
      name: 'graphql.execute',
      attributes: { 'graphql.operation.type': 'query', 'graphql.operation.name': 'GetPet' },
    });
    const database = childrenOf(spans, execute as ReadableSpan);
    expect(database.map((child) => child.name)).toContain('find pets');
    for (const command of database) {
      expect(command.attributes).toMatchObject({ 'db.system.name': 'mongodb', 'db.collection.name': 'pets' });
    }
  });

  it('POST /graphql: server span, then parse, validate and execute, MongoDB below execute', async () => {
    const pet = await restPet('Traced over GraphQL');
    const caller = callerTrace();
    const response = await executeGraphQL(
      server,
      PetDocument,
      { id: String(pet.id) },
      {
        ...AUTH,
        traceparent: caller.traceparent,
      },
    );
    expect(response.status).toBe(200);

    const { server: span, spans } = await requestTrace(caller.traceId);
    expect(span).toMatchObject({ name: 'POST /graphql', attributes: { 'http.route': '/graphql' } });
    expect(parentIdOf(span)).toBe(caller.spanId);
    const phases = childrenOf(spans, span);
    expect(phases.map((phase) => phase.name)).toEqual(['graphql.parse', 'graphql.validate', 'graphql.execute']);
    expect(phases[2]?.attributes).toEqual({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'Pet' });
    expect(childrenOf(spans, phases[2] as ReadableSpan).map((child) => child.name)).toContain('find pets');
  });

  it('POST /mcp: a tool call is a server span with the MCP method and the tool, the execute span of its REST twin below', async () => {
    const caller = callerTrace();
    const response = await server.request
      .post('/mcp')
      .set(AUTH)
      .set({ traceparent: caller.traceparent, Accept: 'application/json, text/event-stream' })
      .set('Mcp-Protocol-Version', '2025-11-25')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_pets', arguments: { limit: 1 } } });
    expect(response.status).toBe(200);

    const { server: span, spans } = await requestTrace(caller.traceId);
    expect(span).toMatchObject({
      name: 'POST /mcp',
      attributes: { 'http.route': '/mcp', 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'list_pets' },
    });
    const [execute] = childrenOf(spans, span);
    expect(execute?.attributes).toEqual({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'ListPets' });
  });

  it('both faces show the same execute span: a REST get is the GraphQL query it runs', async () => {
    const pet = await restPet('Same below');
    const viaRest = callerTrace();
    await server.request.get(`/v1/pets/${pet.id}`).set(AUTH).set('traceparent', viaRest.traceparent);
    const viaGraphQL = callerTrace();
    await executeGraphQL(server, PetDocument, { id: String(pet.id) }, { ...AUTH, traceparent: viaGraphQL.traceparent });

    const shapes = await Promise.all(
      [viaRest, viaGraphQL].map(async ({ traceId }) => {
        const { spans } = await requestTrace(traceId);
        return shapeBelow(spans, spans.find((span) => span.name === 'graphql.execute') as ReadableSpan);
      }),
    );
    expect(shapes[0]).toEqual(shapes[1]);
    expect(shapes[0]?.database.length).toBeGreaterThan(0);
  });

  it('a caller that did not sample its trace gets none recorded, but the log still names the trace', async () => {
    const caller = callerTrace();
    const unsampled = caller.traceparent.replace(/-01$/, '-00');
    const { logged, requestId } = await linesDuring(lines, () =>
      server.request.get('/v1/pets').set(AUTH).set('traceparent', unsampled),
    );
    expect(logged.find((line) => line.reqId === requestId && line.msg === 'request')).toMatchObject({
      trace_id: caller.traceId,
      trace_flags: '00',
    });
    expect(spansOf(caller.traceId)).toEqual([]);
  });
});

describe('what spans never hold', () => {
  it('the values of a create, on either face: not in attributes, not in events, not in MongoDB statements', async () => {
    const secret = `Secret-${Date.now()}`;
    const viaRest = callerTrace();
    await server.request
      .post('/v1/pets')
      .set({ ...AUTH, traceparent: viaRest.traceparent })
      .send({ name: `${secret}-rest`, categoryId: 5 });
    const viaGraphQL = callerTrace();
    await executeGraphQL(
      server,
      CreatePetDocument,
      { input: { name: `${secret}-graphql`, categoryId: 5 } },
      { ...AUTH, traceparent: viaGraphQL.traceparent },
    );

    for (const { traceId } of [viaRest, viaGraphQL]) {
      const { spans } = await requestTrace(traceId);
      const inserts = spans.filter((span) => span.attributes['db.operation.name'] === 'insert');
      expect(inserts.length).toBeGreaterThan(0);
      expect(String(inserts[0]?.attributes['db.query.text'])).toContain('"name":"?"');
      const everything = JSON.stringify(spans.map(({ name, attributes, events }) => ({ name, attributes, events })));
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain('createPet(input');
    }
  });

  it('the probes and the scrape: /health, /ready and /metrics make no span at all', async () => {
    const probes = ['/health', '/ready', '/metrics'].map((path) => ({ path, caller: callerTrace() }));
    for (const { path, caller } of probes) {
      const response = await server.request.get(path).set({ ...AUTH, traceparent: caller.traceparent });
      expect(response.status).toBe(200);
    }
    // A traced request after them: once its spans are in, theirs would have been too.
    const after = callerTrace();
    await server.request.get('/v1/pets').set({ ...AUTH, traceparent: after.traceparent });
    await requestTrace(after.traceId);
    for (const { caller } of probes) expect(spansOf(caller.traceId)).toEqual([]);
  });
});

describe('when something fails, then the span that failed says so', () => {
  it('a bug below a REST get: exception and ERROR on the execute span, ERROR on the 500 server span, ids in the error log', async () => {
    const caller = callerTrace();
    const { response, logged } = await linesDuring(lines, () =>
      server.request.get(`/v1/pets/${BUGGY_PET_ID}`).set({ ...AUTH, traceparent: caller.traceparent }),
    );
    expect(response.status).toBe(500);

    const { server: span, spans } = await requestTrace(caller.traceId);
    const execute = spans.find((candidate) => candidate.name === 'graphql.execute') as ReadableSpan;
    expect(execute.status.code).toBe(SpanStatusCode.ERROR);
    expect(execute.events).toEqual([
      expect.objectContaining({
        name: 'exception',
        attributes: expect.objectContaining({
          'exception.type': 'TypeError',
          'exception.message': BUG,
          'exception.stacktrace': expect.stringContaining(BUG),
        }),
      }),
    ]);
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    const errorLine = logged.find((line) => line.level === ERROR_LEVEL);
    expect(errorLine).toMatchObject({ trace_id: caller.traceId });
    expect(spans.map(idOf)).toContain(errorLine?.span_id);
  });

  it("a client's bad variable: the execute span records its code, never the value sent", async () => {
    const caller = callerTrace();
    const response = await executeGraphQL(server, PetsDocument, invalidVariables({ limit: 'zzz-not-a-number' }), {
      ...AUTH,
      traceparent: caller.traceparent,
    });
    expect(response.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    const { server: span, spans } = await requestTrace(caller.traceId);
    const execute = spans.find((candidate) => candidate.name === 'graphql.execute') as ReadableSpan;
    expect(execute.status).toEqual({ code: SpanStatusCode.ERROR, message: 'BAD_USER_INPUT' });
    expect(execute.events[0]?.attributes).toEqual({ 'exception.type': 'BAD_USER_INPUT' });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(JSON.stringify(spans.map(({ attributes, events }) => ({ attributes, events })))).not.toContain('zzz');
  });

  it('a document that fails validation: the validate span says so, and nothing is executed', async () => {
    const caller = callerTrace();
    await executeGraphQL(server, '{ pets { noSuchField } }', {}, { ...AUTH, traceparent: caller.traceparent });

    const { server: span, spans } = await requestTrace(caller.traceId);
    expect(childrenOf(spans, span).map((phase) => [phase.name, phase.status.code])).toEqual([
      ['graphql.parse', SpanStatusCode.UNSET],
      ['graphql.validate', SpanStatusCode.ERROR],
    ]);
    expect(JSON.stringify(spans.map(({ events }) => events))).not.toContain('noSuchField');
  });
});

describe('logs and traces meet', () => {
  it('every line written while serving a request carries its trace: the access log names the server span', async () => {
    const caller = callerTrace();
    const { logged, requestId } = await linesDuring(lines, () =>
      server.request.get('/v1/pets').set({ ...AUTH, traceparent: caller.traceparent }),
    );
    const { server: span } = await requestTrace(caller.traceId);
    const ofTheRequest = logged.filter((line) => line.reqId === requestId);
    expect(ofTheRequest.length).toBeGreaterThan(0);
    for (const line of ofTheRequest) expect(line).toMatchObject({ trace_id: caller.traceId, trace_flags: '01' });
    expect(ofTheRequest.find((line) => line.msg === 'request')).toMatchObject({ span_id: idOf(span) });
  });

  it('background work (the key sync, every 2 s) stays untraced: every span belongs to a request', async () => {
    await new Promise((waited) => setTimeout(waited, 2_500));
    const spans = finishedSpans.getFinishedSpans();
    const requests = new Set(
      spans.filter((span) => span.kind === SpanKind.SERVER).map((span) => span.spanContext().traceId),
    );
    expect(spans.filter((span) => !requests.has(span.spanContext().traceId))).toEqual([]);
  });
});
