import type { Scope } from '../auth/scopes.ts';
import {
  REST_OPERATIONS,
  type RestOperation,
  type RestRequest,
  type RestResult,
  scopeOf,
} from '../rest/contract-operations.ts';

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
  required?: boolean;
  description?: string;
  schema: JsonSchema;
}

/** `required` for the parameters that are, none when none is. */
function requiredOf(parameters: readonly Parameter[]): { required?: string[] } {
  const required = parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name);
  return required.length > 0 ? { required } : {};
}

const parametersOf = (document: JsonSchema, operation: JsonSchema) =>
  ((operation.parameters ?? []) as unknown[]).map((each) => inlined(document, each) as Parameter);

/** A parameter's schema, described by the parameter (which says what it means here). */
const schemaOf = ({ schema, description }: Parameter): JsonSchema => ({
  ...schema,
  ...(description ? { description } : {}),
});

/** `schema` without its `pattern`s: what the service answers, checked by the SDK on every result. */
function withoutPatterns(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutPatterns);
  if (typeof schema !== 'object' || schema === null) return schema;
  const { pattern: _, ...rest } = schema as JsonSchema;
  return Object.fromEntries(Object.entries(rest).map(([name, each]) => [name, withoutPatterns(each)]));
}

/**
 * An answer's schema. Its patterns are left out: they say what the service takes, and pets stored
 * before a rule may break it (the contract says so of names), where REST serves them as they are.
 */
const answerSchemaOf = (document: JsonSchema, operation: JsonSchema, status: string): JsonSchema =>
  withoutPatterns(
    inlined(
      document,
      (operation.responses as Record<string, { content: Record<string, { schema: unknown }> }>)[status]?.content[
        'application/json'
      ]?.schema,
    ),
  ) as JsonSchema;

function operationNamed(operationId: string): RestOperation {
  const found = REST_OPERATIONS.find((operation) => operation.operationId === operationId);
  if (!found) throw new Error(`no contract operation ${operationId}`);
  return found;
}

function scopeNeeded(operation: RestOperation): Scope {
  const scope = scopeOf(operation);
  if (!scope) throw new Error(`the contract operation ${operation.operationId} names no scope`);
  return scope;
}

/** The contract's own says to take it from a Link header, which a tool's caller never sees. */
const CURSOR_DESCRIPTION = 'Where the page starts: a `nextCursor` from an earlier result, as it was given.';
const NEXT_DESCRIPTION = 'There is a next page: call again with this as `cursor`.';

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
    scope: scopeNeeded(operation),
    readOnly: true,
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(
        query.map((parameter) =>
          parameter === cursor
            ? [parameter.name, { ...parameter.schema, description: CURSOR_DESCRIPTION }]
            : [parameter.name, schemaOf(parameter)],
        ),
      ),
      ...requiredOf(query),
    },
    outputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['pets'],
      properties: {
        pets: answerSchemaOf(document, spec, '200'),
        ...(cursor
          ? { nextCursor: { ...(withoutPatterns(cursor.schema) as JsonSchema), description: NEXT_DESCRIPTION } }
          : {}),
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
    scope: scopeNeeded(operation),
    readOnly: false,
    inputSchema: {
      ...body,
      properties: { ...body.properties, idempotencyKey: schemaOf(header) },
      required: [...body.required, 'idempotencyKey'],
    },
    outputSchema: answerSchemaOf(document, spec, '201'),
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
