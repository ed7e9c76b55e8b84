import { describe, expect, it } from 'vitest';
import { expectError } from './support/openapi-contract.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const SMALL_LIMIT = 1024;
const DEFAULT_LIMIT = 16_384;
const CHUNKED = { ...AUTH, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' };

const rest = restClient(useTestServer());
/** The same service with a 1 KiB body limit, as MAX_BODY_BYTES=1024 configures it. */
const small = restClient(useTestServer({ maxBodyBytes: SMALL_LIMIT }));

/** Valid NewPet JSON padded with insignificant whitespace to exactly `bytes` bytes. */
function jsonOfSize(bytes: number, name = 'Edge'): string {
  const json = JSON.stringify({ name, categoryId: 1 });
  const size = Buffer.byteLength(json);
  if (size > bytes) throw new Error(`cannot make ${bytes} bytes of ${json}`);
  return `${json}${' '.repeat(bytes - size)}`;
}

describe('when the service runs with the default body limit', () => {
  it(`then a body of exactly ${DEFAULT_LIMIT} bytes is accepted`, async () => {
    const response = await rest.createPetFromText(jsonOfSize(DEFAULT_LIMIT));
    expectStatus(response, 201);
  });

  it(`then a body of ${DEFAULT_LIMIT + 1} bytes gets 413 PAYLOAD_TOO_LARGE and nothing is stored`, async () => {
    const response = await rest.storesNothing(() => rest.createPetFromText(jsonOfSize(DEFAULT_LIMIT + 1)));
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('when the service runs with a configured body limit', () => {
  it('then a body of exactly the limit is accepted', async () => {
    const response = await small.createPetFromText(jsonOfSize(SMALL_LIMIT));
    expectStatus(response, 201);
  });

  it('then a body one byte over it (with Content-Length) gets 413 and nothing is stored', async () => {
    const response = await small.storesNothing(() => small.createPetFromText(jsonOfSize(SMALL_LIMIT + 1)));
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('then a much larger body (1 MiB, with Content-Length) gets 413', async () => {
    const response = await small.createPetFromText(jsonOfSize(1024 * 1024));
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('then the limit counts bytes, not characters', async () => {
    // 100 three-byte characters: 1000 characters in all but 1200 bytes of UTF-8.
    const body = jsonOfSize(1200, '€'.repeat(100));
    expect(body.length).toBeLessThanOrEqual(SMALL_LIMIT);
    const response = await small.createPetFromText(body);
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('then a chunked body (no Content-Length) gets 413 once it passes the limit, and nothing is stored', async () => {
    const body = jsonOfSize(4 * SMALL_LIMIT);
    const chunks = [body.slice(0, 512), body.slice(512, 1024), body.slice(1024, 2048), body.slice(2048)];
    const response = await small.storesNothing(() => small.sendRaw('POST', '/v1/pets', CHUNKED, chunks));
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('then a chunked body within the limit is accepted', async () => {
    const body = jsonOfSize(SMALL_LIMIT, 'Chunked');
    const response = await small.sendRaw('POST', '/v1/pets', CHUNKED, [
      body.slice(0, 10),
      body.slice(10, 700),
      body.slice(700),
    ]);
    expectStatus(response, 201);
    expect(response.body).toMatchObject({ name: 'Chunked', categoryId: 1 });
  });
});
