import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { capturingLogger, type LogLine, linesDuring } from './support/capturing-logger.ts';
import { executeGraphQL } from './support/graphql-client.ts';
import { CreatePetDocument } from './support/operations.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const { logger, lines } = capturingLogger();
const server = useTestServer({ logger });
const INFO = 30;

/** A client's mistake is one info line, the access log's, carrying the request id: no warning. */
function expectOnlyTheAccessLine(logged: LogLine[], requestId: string | undefined, status: number): void {
  expect(logged.filter((line) => line.level > INFO)).toEqual([]);
  expect(logged.filter((line) => line.reqId === requestId)).toEqual([
    expect.objectContaining({ level: INFO, msg: 'request', status }),
  ]);
}

describe("when a client's request is refused with a 4xx, then the log has its access line at info and nothing louder", () => {
  it('a REST create reusing an Idempotency-Key for another pet (422)', async () => {
    const key = { ...AUTH, 'Idempotency-Key': randomUUID() };
    await server.request.post('/v1/pets').set(key).send({ name: 'First', categoryId: 1 });
    const { logged, requestId } = await linesDuring(lines, () =>
      server.request.post('/v1/pets').set(key).send({ name: 'Other', categoryId: 1 }),
    );
    expectOnlyTheAccessLine(logged, requestId, 422);
  });

  it('a GraphQL createPet with an empty Idempotency-Key (400)', async () => {
    const { logged, requestId } = await linesDuring(lines, () =>
      executeGraphQL(
        server,
        CreatePetDocument,
        { input: { name: 'Rex', categoryId: 1 } },
        { ...AUTH, 'Idempotency-Key': '' },
      ),
    );
    expectOnlyTheAccessLine(logged, requestId, 400);
  });

  it.each([
    ['a missing key (401)', () => server.request.get('/v1/pets'), 401],
    ['an unknown route (404)', () => server.request.get('/v1/nope').set(AUTH), 404],
    ['a body that is not JSON (400)', () => server.request.post('/v1/pets').set(AUTH).type('json').send('{'), 400],
  ] as const)('%s', async (_name, send, status) => {
    const { logged, requestId } = await linesDuring(lines, send);
    expectOnlyTheAccessLine(logged, requestId, status);
  });
});
