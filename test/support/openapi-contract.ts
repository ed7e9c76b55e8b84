/**
 * Checks REST responses against schema/openapi.yaml, so every test that calls the API also proves
 * the committed contract: documented status, body schema, content type and required headers.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

type JsonObject = Record<string, unknown>;

export interface ContractResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

const DOCUMENT_PATH = new URL('../../schema/openapi.yaml', import.meta.url);
const DOCUMENT_ID = 'https://petstore-gateway.invalid/openapi.json';
// Strict ajv rejects unknown keywords: these are OpenAPI's own, of the document and of Schema Objects.
const OPENAPI_KEYWORDS = [
  'openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags',
  'externalDocs', 'discriminator', 'xml', 'example',
];
// ajv-formats is CommonJS: under NodeNext its default import is module.exports, typed as the namespace.
const addFormats = addFormatsModule.default;

export function loadOpenApiDocument(): JsonObject {
  return asObject(parse(readFileSync(DOCUMENT_PATH, 'utf8')), 'schema/openapi.yaml');
}

let contract: { document: JsonObject; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined;

function getContract(): NonNullable<typeof contract> {
  if (!contract) {
    const document = loadOpenApiDocument();
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

export function assertMatchesContract(
  method: string,
  pathTemplate: '/pets' | '/pets/{petId}',
  response: ContractResponse,
): void {
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
  const mediaType = String(contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') fail(`content-type ${JSON.stringify(contentType)} is not application/json`);
  const validate = validatorAt(`${documented.at}${pointer(['content', 'application/json', 'schema'])}`);
  if (!validate(response.body)) fail(`body does not match the schema: ${ajv.errorsText(validate.errors)}`);
}
