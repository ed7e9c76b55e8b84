import { describe, expect, it } from 'vitest';
import { expectError } from './support/openapi-contract.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const server = useTestServer();
const rest = restClient(server);

describe('when a client posts a body that is not JSON', () => {
  it.each([
    ['truncated JSON', '{"name":'],
    ['JSON with a trailing comma', '{"name":"x","categoryId":1,}'],
    ['single-quoted pseudo-JSON', "{'name':'x','categoryId':1}"],
    ['an empty body', ''],
    ['whitespace only', '   '],
  ])('then %s gets 400 INVALID_JSON and nothing is stored', async (_what, body) => {
    const response = await rest.storesNothing(() => rest.createPetFromText(body));
    expectError(response, 400, 'INVALID_JSON');
  });

  it('then bytes that are not valid UTF-8 get 400 INVALID_JSON', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"name":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('","categoryId":1}'),
    ]);
    // node:http, because superagent would serialise a Buffer as JSON ({"type":"Buffer","data":[...]}).
    const headers = { ...AUTH, 'Content-Type': 'application/json', 'Content-Length': String(bytes.byteLength) };
    const response = await rest.sendRaw('POST', '/v1/pets', headers, [bytes]);
    expectError(response, 400, 'INVALID_JSON');
  });
});

describe('when a client posts a body under a Content-Type other than JSON in UTF-8', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['text/plain with utf-8', 'text/plain; charset=utf-8'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['a JSON-like subtype', 'application/merge-patch+json'],
    ['JSON in another charset', 'application/json; charset=iso-8859-1'],
    ['a malformed media type', 'application/json;;'],
  ])('then %s gets 415 UNSUPPORTED_MEDIA_TYPE and nothing is stored', async (_what, contentType) => {
    const response = await rest.storesNothing(() =>
      rest.createPetFromText(JSON.stringify({ name: 'Typed', categoryId: 1 }), contentType),
    );
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('then a body without any Content-Type gets 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const body = JSON.stringify({ name: 'Untyped', categoryId: 1 });
    const headers = { ...AUTH, 'Content-Length': String(Buffer.byteLength(body)) };
    const response = await rest.sendRaw('POST', '/v1/pets', headers, [body]);
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it.each(['application/json; charset=utf-8', 'application/json; charset=UTF-8', 'Application/JSON'])(
    'then the Content-Type %j is accepted as JSON',
    async (contentType) => {
      const response = await rest.createPetFromText(JSON.stringify({ name: 'Typed', categoryId: 1 }), contentType);
      expectStatus(response, 201);
      expect(response.body).toMatchObject({ name: 'Typed', categoryId: 1 });
    },
  );
});
