/**
 * Checks REST responses against schema/openapi.yaml, so every test that calls the API also proves
 * the committed contract: documented status, body schema, content type and required headers.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import { loadOpenApiDocument } from '../../src/rest/openapi-document.ts';
import type { ERROR_STATUS, ErrorBody, OPERATIONS, OperationId } from './rest-types.ts';

// One loader for the service and the tests: the document the adapter serves is the one we check against.
export { loadOpenApiDocument };

type JsonObject = Record<string, unknown>;

export interface ContractResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

const DOCUMENT_ID = 'https://petstore-gateway.invalid/openapi.json';
// Strict ajv rejects unknown keywords: these are OpenAPI's own, of the document and of Schema Objects.
const OPENAPI_KEYWORDS = [
  'openapi',
  'info',
  'jsonSchemaDialect',
  'servers',
  'paths',
  'webhooks',
  'components',
  'security',
  'tags',
  'externalDocs',
  'discriminator',
  'xml',
  'example',
];
// ajv-formats is CommonJS: under NodeNext its default import is module.exports, typed as the namespace.
const addFormats = addFormatsModule.default;

let contract: { document: JsonObject; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined;

function getContract(): NonNullable<typeof contract> {
  if (!contract) {
    const document = asObject(loadOpenApiDocument(), 'schema/openapi.yaml');
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    addFormats(ajv); // includes the OpenAPI formats int32 and int64
    ajv.addVocabulary(OPENAPI_KEYWORDS);
    // The whole document is registered so that refs into paths and components resolve in place.
    ajv.addSchema(document, DOCUMENT_ID);
    contract = { document, ajv, validators: new Map() };
  }
  return contract;
}

function asObject(value: unknown, where: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`OpenAPI document: expected an object at ${where}`);
  }
  return value as JsonObject;
}

const pointer = (segments: string[]): string =>
  segments.map((s) => `/${s.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** Follows `$ref`s (local ones only) and returns the object with the JSON pointer where it lives. */
function resolve(at: string, document: JsonObject): { node: JsonObject; at: string } {
  let node: unknown = document;
  for (const segment of at.split('/').slice(1)) {
    node = asObject(node, at)[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  const object = asObject(node, at);
  const ref = object.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) return resolve(ref.slice(1), document);
  return { node: object, at };
}

function validatorAt(at: string): ValidateFunction {
  const { ajv, validators } = getContract();
  let validate = validators.get(at);
  if (!validate) {
    const fragment = at.split('/').map(encodeURIComponent).join('/');
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${fragment}` });
    validators.set(at, validate);
  }
  return validate;
}

export type PathTemplate = (typeof OPERATIONS)[OperationId]['path'];

/** The template of the document's operation for this method and path (below the server URL), if any. */
export function operationAt(method: string, path: string): PathTemplate | undefined {
  const paths = asObject(getContract().document.paths, '/paths');
  return (Object.keys(paths) as PathTemplate[]).find(
    (template) =>
      new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path) &&
      method.toLowerCase() in asObject(paths[template], template),
  );
}

/** Whether a Content-Type header names JSON, whatever its parameters and case. */
function isJson(contentType: string | string[] | undefined): boolean {
  const mediaType = String(contentType ?? '').split(';')[0];
  return mediaType?.trim().toLowerCase() === 'application/json';
}

export function assertMatchesContract(method: string, pathTemplate: PathTemplate, response: ContractResponse): void {
  const { document, ajv } = getContract();
  const operation = `${method.toUpperCase()} ${pathTemplate}`;
  const fail = (problem: string): never => {
    throw new Error(`${operation} -> ${response.status}: ${problem}\nbody: ${JSON.stringify(response.body)}`);
  };
  const pathItem = asObject(asObject(document.paths, '/paths')[pathTemplate], pathTemplate);
  if (!(method.toLowerCase() in pathItem)) fail('not an operation of the contract');
  const responsesAt = pointer(['paths', pathTemplate, method.toLowerCase(), 'responses']);
  const responses = resolve(responsesAt, document).node;
  const status = String(response.status);
  if (!(status in responses)) fail(`status not documented (documented: ${Object.keys(responses).join(', ')})`);
  const documented = resolve(`${responsesAt}${pointer([status])}`, document);

  const headers = new Map(Object.entries(response.headers).map(([name, value]) => [name.toLowerCase(), value]));
  for (const name of Object.keys(asObject(documented.node.headers ?? {}, `${documented.at}/headers`))) {
    const header = resolve(`${documented.at}${pointer(['headers', name])}`, document);
    const raw = headers.get(name.toLowerCase());
    if (raw === undefined) {
      if (header.node.required === true) fail(`required header ${name} is missing`);
      continue;
    }
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const validate = validatorAt(`${header.at}/schema`);
    if (!validate(value)) fail(`header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
  }

  const content = documented.node.content;
  if (content === undefined) return;
  if (!('application/json' in asObject(content, `${documented.at}/content`))) {
    fail('only application/json content is supported by this helper');
  }
  const contentType = headers.get('content-type');
  if (!isJson(contentType)) fail(`content-type ${JSON.stringify(contentType)} is not application/json`);
  const validate = validatorAt(`${documented.at}${pointer(['content', 'application/json', 'schema'])}`);
  if (!validate(response.body)) fail(`body does not match the schema: ${ajv.errorsText(validate.errors)}`);
}

/** A webhook request the service sent, against the document's `webhooks` section: its headers and body. */
export function assertMatchesWebhook(
  webhook: 'petCreated',
  request: { headers: Record<string, string | string[] | undefined>; body: string },
): void {
  const { document, ajv } = getContract();
  const at = pointer(['webhooks', webhook, 'post']);
  const fail = (problem: string): never => {
    throw new Error(`webhook ${webhook}: ${problem}\nbody: ${request.body}`);
  };
  // The webhook's headers are written inline in the document, not as $refs.
  const parameters = resolve(at, document).node.parameters as { name: string; required?: boolean }[];
  for (const [index, { name, required }] of parameters.entries()) {
    const value = request.headers[name];
    if (value === undefined) {
      if (required) fail(`${name} is missing`);
      continue;
    }
    const validate = validatorAt(`${at}${pointer(['parameters', String(index), 'schema'])}`);
    if (!validate(value)) fail(`header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
  }
  if (!isJson(request.headers['content-type'])) fail(`content-type ${request.headers['content-type']} is not JSON`);
  const validate = validatorAt(`${at}${pointer(['requestBody', 'content', 'application/json', 'schema'])}`);
  if (!validate(JSON.parse(request.body))) fail(`body does not match the schema: ${ajv.errorsText(validate.errors)}`);
}

/** The closed set of Error `code` values, as published in the document's Error schema. */
export function errorCodes(): readonly string[] {
  const { document } = getContract();
  const code = resolve('/components/schemas/Error/properties/code', document).node;
  if (!Array.isArray(code.enum) || !code.enum.every((value) => typeof value === 'string')) {
    throw new Error('OpenAPI document: components/schemas/Error/properties/code has no string enum');
  }
  return code.enum as string[];
}

/** Throws unless the body is an Error of the document (for responses on paths the document does not list). */
export function assertErrorBody(body: unknown): void {
  const { ajv } = getContract();
  const validate = validatorAt('/components/schemas/Error');
  if (!validate(body))
    throw new Error(`not an Error body: ${ajv.errorsText(validate.errors)}\nbody: ${JSON.stringify(body)}`);
}

/** An error response as the document describes every one: JSON, an Error body, `status` equal to the HTTP status. */
export function assertErrorResponse(response: ContractResponse): void {
  const fail = (problem: string): never => {
    throw new Error(`error response ${response.status}: ${problem}\nbody: ${JSON.stringify(response.body)}`);
  };
  const contentType = Object.entries(response.headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  if (!isJson(contentType)) fail(`content-type ${JSON.stringify(contentType)} is not application/json`);
  assertErrorBody(response.body);
  const { status } = response.body as { status: unknown };
  if (status !== response.status) fail(`body status ${JSON.stringify(status)} differs from the HTTP status`);
}

export interface ContractOptions {
  /**
   * The base path the server under test is mounted at, when it is not the document's server URL
   * (`/v1`): addresses in headers are read relative to it, as a client of that deployment would.
   */
  basePath?: string;
}

function serverUrl(): string {
  const { document } = getContract();
  const [first] = Array.isArray(document.servers) ? (document.servers as unknown[]) : [];
  const url = asObject(first, '/servers/0').url;
  if (typeof url !== 'string') throw new Error('OpenAPI document: /servers/0/url is not a string');
  return url;
}

function rebase(response: ContractResponse, basePath: string): ContractResponse {
  const target = serverUrl();
  const prefix = new RegExp(`(^|<)${basePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[/?>]|$)`, 'g');
  const move = (value: string): string => value.replace(prefix, `$1${target}`);
  const headers = Object.fromEntries(
    Object.entries(response.headers).map(([name, value]) => [
      name,
      typeof value === 'string' ? move(value) : Array.isArray(value) ? value.map(move) : value,
    ]),
  );
  return { status: response.status, headers, body: response.body };
}

/**
 * assertMatchesContract for a response as supertest (or a plain node:http reader) gives it, plus the
 * rules of every error response; returns the response so a test can go on asserting.
 */
export function expectContract<T extends ContractResponse>(
  response: T,
  method: string,
  pathTemplate: PathTemplate,
  options: ContractOptions = {},
): T {
  const checked = options.basePath ? rebase(response, options.basePath) : response;
  assertMatchesContract(method, pathTemplate, checked);
  if (response.status >= 400) assertErrorResponse(checked);
  return response;
}

/** The codes of the Error bodies an answer with this status may carry. */
type CodeAt<Status> = Extract<ErrorBody, { status: Status }>['code'];

/**
 * An Error response with this status and code (the caller has already run expectContract or
 * assertErrorResponse on it); a code the answers of `response` cannot carry does not compile. With
 * `field`, the message must name that REST field as a word and must not leak the GraphQL spelling
 * behind it (`input.name`, `first`, `after`, `$limit`).
 */
export function expectError<R extends ContractResponse, C extends CodeAt<R['status']>>(
  response: R,
  status: NoInfer<(typeof ERROR_STATUS)[C]>,
  code: C,
  field?: string,
): asserts response is R & { status: (typeof ERROR_STATUS)[C]; body: ErrorBody<C> } {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  const contentType = Object.entries(response.headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  expect(String(contentType)).toMatch(/^application\/json\s*(;|$)/);
  const body = response.body as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status']);
  expect(body).toMatchObject({ code, status });
  expect(errorCodes()).toContain(body.code);
  expect(body.message).toEqual(expect.any(String));
  if (field !== undefined) {
    expect(body.message).toMatch(new RegExp(`(^|[^A-Za-z0-9_.$])${field}([^A-Za-z0-9_]|$)`));
    expect(body.message).not.toMatch(/\binput\.|\$\w|"first"|"after"/);
  }
}

/**
 * An operation as the document declares it, in the shape of rest-types.ts's OPERATIONS: for each
 * status, the components/schemas name of its JSON body and its required headers, lower-cased.
 */
export function documentedOperation(operationId: string) {
  const { document } = getContract();
  const paths = asObject(document.paths, '/paths');
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(asObject(item, path))) {
      if (asObject(operation, `${path}/${method}`).operationId !== operationId) continue;
      const at = pointer(['paths', path, method, 'responses']);
      const responses = Object.keys(resolve(at, document).node).map((status) => {
        const answer = resolve(`${at}${pointer([status])}`, document);
        const schema = asObject(answer.node.content ?? {}, answer.at)['application/json'] as
          | { schema?: { $ref?: string } }
          | undefined;
        const headers = Object.keys(asObject(answer.node.headers ?? {}, answer.at)).filter(
          (name) => resolve(`${answer.at}${pointer(['headers', name])}`, document).node.required === true,
        );
        return [
          status,
          { body: schema?.schema?.$ref?.split('/').at(-1), headers: headers.map((name) => name.toLowerCase()) },
        ] as const;
      });
      return { method: method.toUpperCase(), path, responses: Object.fromEntries(responses) };
    }
  }
  throw new Error(`OpenAPI document: no operation ${operationId}`);
}

/** A schema of components/schemas, as the document writes it. */
export function documentedSchema(name: string): JsonObject {
  return resolve(pointer(['components', 'schemas', name]), getContract().document).node;
}
