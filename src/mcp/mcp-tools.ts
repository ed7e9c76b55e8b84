import type { Scope } from '../auth/scopes.ts';
import { priceOf } from '../graphql/operation-admission.ts';
import { REST_OPERATIONS, type RestOperation, type RestRequest, type RestResult } from '../rest/contract-operations.ts';

export type JsonSchema = Record<string, unknown>;
type Arguments = Record<string, unknown>;

/** One of the contract's operations offered to agents: its REST twin runs it, so the answers are equal. */
export interface PetTool {
  name: string;
  title: string;
  /** Fixed text: pet data, which anyone may have written, only ever travels as JSON. */
  description: string;
  operation: RestOperation;
  /** What the key needs to be shown the tool: the twin's scope. */
  scope: Scope;
  readOnly: boolean;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  /** The arguments, already valid against inputSchema, as the request the REST twin would get. */
  request(args: Arguments, basePath: string): RestRequest;
  /** The Idempotency-Key the call carries, for a create. */
  idempotencyKey?(args: Arguments): string;
  /** The twin's answer as the tool's structured result. */
  output(result: RestResult): Record<string, unknown>;
}

/** The document's operation object for a contract operation. */
function operationObject(document: JsonSchema, operation: RestOperation): JsonSchema {
  const paths = document.paths as Record<string, Record<string, JsonSchema>>;
  const found = paths[operation.path]?.[operation.method.toLowerCase()];
  if (!found) throw new Error(`the OpenAPI document has no ${operation.method} ${operation.path}`);
  return found;
}

/** `value` with every `$ref` into the document written out in place: a tool's schema stands alone. */
function inlined(document: JsonSchema, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((each) => inlined(document, each));
  if (typeof value !== 'object' || value === null) return value;
  const { $ref, ...rest } = value as JsonSchema;
  const own = Object.fromEntries(Object.entries(rest).map(([name, each]) => [name, inlined(document, each)]));
  if (typeof $ref !== 'string') return own;
  // The document's references are local (`#/components/...`); siblings (a description) override.
  const target = $ref
    .slice(2)
    .split('/')
    .reduce<unknown>((at, name) => (at as JsonSchema | undefined)?.[name], document);
  if (target === undefined) throw new Error(`the OpenAPI document has no ${$ref}`);
  return { ...(inlined(document, target) as JsonSchema), ...own };
}

interface Parameter {
  name: string;
  in: string;
  description?: string;
  schema: JsonSchema;
}

const parametersOf = (document: JsonSchema, operation: JsonSchema) =>
  ((operation.parameters ?? []) as unknown[]).map((each) => inlined(document, each) as Parameter);

/** A parameter's schema, with its description where the schema has none. */
const schemaOf = ({ schema, description }: Parameter): JsonSchema => ({
  ...(description ? { description } : {}),
  ...schema,
});

const bodySchemaOf = (document: JsonSchema, operation: JsonSchema, status: string): JsonSchema =>
  inlined(
    document,
    (operation.responses as Record<string, { content: Record<string, { schema: unknown }> }>)[status]?.content[
      'application/json'
    ]?.schema,
  ) as JsonSchema;

function operationNamed(operationId: string): RestOperation {
  const found = REST_OPERATIONS.find((operation) => operation.operationId === operationId);
  if (!found) throw new Error(`no contract operation ${operationId}`);
  return found;
}

const scopeOf = (operation: RestOperation): Scope => priceOf(operation.document)?.scope ?? 'pets:read';

const LIST_DESCRIPTION =
  'Lists pets in id order, one page at a time: at most `limit` (20 unless given, 100 at most), only those with `status` when given. A result with `nextCursor` has more: call again with it as `cursor`. Only reads.';

function listPets(document: JsonSchema): PetTool {
  const operation = operationNamed('listPets');
  const spec = operationObject(document, operation);
  const query = parametersOf(document, spec).filter((parameter) => parameter.in === 'query');
  const cursor = query.find((parameter) => parameter.name === 'cursor');
  return {
    name: 'list_pets',
    title: 'List pets',
    description: LIST_DESCRIPTION,
    operation,
    scope: scopeOf(operation),
    readOnly: true,
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(query.map((parameter) => [parameter.name, schemaOf(parameter)])),
    },
    outputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['pets'],
      properties: {
        pets: bodySchemaOf(document, spec, '200'),
        ...(cursor ? { nextCursor: { ...cursor.schema, description: 'The `cursor` of the next page.' } } : {}),
      },
    },
    request: (args, basePath) => {
      const params = new URLSearchParams();
      for (const { name } of query) if (args[name] !== undefined) params.set(name, String(args[name]));
      return { pathParams: {}, query: params, body: undefined, basePath };
    },
    output: (result) => ({
      pets: JSON.parse(result.json) as unknown,
      ...(result.next === undefined ? {} : { nextCursor: result.next }),
    }),
  };
}

const CREATE_DESCRIPTION =
  'Adds a pet and returns it with its new id. `idempotencyKey` is required: a fresh value (a UUID) for each new pet; calling again with the same key and the same fields returns the pet already added instead of adding another, so a retry is always safe. Needs an API key with the pets:write scope.';

function createPet(document: JsonSchema): PetTool {
  const operation = operationNamed('createPet');
  const spec = operationObject(document, operation);
  const body = inlined(
    document,
    (spec.requestBody as { content: Record<string, { schema: unknown }> }).content['application/json']?.schema,
  ) as JsonSchema & { properties: JsonSchema; required: string[] };
  const header = parametersOf(document, spec).find((parameter) => parameter.name === 'Idempotency-Key');
  if (!header) throw new Error('the OpenAPI document has no Idempotency-Key on createPet');
  return {
    name: 'create_pet',
    title: 'Add a pet',
    description: CREATE_DESCRIPTION,
    operation,
    scope: scopeOf(operation),
    readOnly: false,
    inputSchema: {
      ...body,
      properties: { ...body.properties, idempotencyKey: schemaOf(header) },
      required: [...body.required, 'idempotencyKey'],
    },
    outputSchema: bodySchemaOf(document, spec, '201'),
    request: ({ idempotencyKey: _, ...newPet }, basePath) => ({
      pathParams: {},
      query: new URLSearchParams(),
      body: newPet,
      basePath,
    }),
    idempotencyKey: (args) => args.idempotencyKey as string,
    output: (result) => JSON.parse(result.json) as Record<string, unknown>,
  };
}

/** The tools, their schemas from the OpenAPI document (the contract's own words and limits). */
export function petTools(document: JsonSchema): readonly PetTool[] {
  return [listPets(document), createPet(document)];
}
