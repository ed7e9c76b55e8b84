/**
 * docs/petstore-interface.md is the interface this project implements; schema/openapi.yaml is our
 * contract for it. Wherever the two can be compared, they must agree: the contract may add (more
 * statuses, a cursor, limits the interface leaves unsaid) but never contradict or drop.
 */
import { describe, expect, it } from 'vitest';
import { readInterfaceSpec, type SpecSection, sectionOf, tableOf } from './support/interface-spec.ts';
import { documentedOperation, documentedSchema, loadOpenApiDocument } from './support/openapi-contract.ts';

type Node = Record<string, unknown>;

const spec = readInterfaceSpec();
const document = loadOpenApiDocument();

/** What a local `$ref` points to (siblings of the `$ref`, such as a description, are dropped). */
function deref(node: unknown): Node {
  let value = node as Node;
  while (typeof value.$ref === 'string') {
    const segments = value.$ref.replace(/^#\//, '').split('/');
    value = segments.reduce<unknown>((at, segment) => (at as Node)[segment.replaceAll('~1', '/')], document) as Node;
  }
  return value;
}
const refName = (node: unknown) =>
  String((node as Node).$ref ?? '')
    .split('/')
    .at(-1);

/** Each endpoint section of the interface: the one with an `Operation name` bullet. */
const endpoints = [...spec.values()].flatMap((section) => {
  const operationId = section.bullets.get('Operation name');
  const [method, path] = section.bullets.get('Method and path')?.split(' ') ?? [];
  return operationId && method && path ? [{ section, operationId, method, path }] : [];
});

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const operations = Object.entries(document.paths as Record<string, Node>).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation: operation as Node })),
);
function operationOf(operationId: string): Node {
  const found = operations.find(({ operation }) => operation.operationId === operationId);
  if (!found) throw new Error(`schema/openapi.yaml has no operation ${operationId}`);
  return found.operation;
}

describe('schema/openapi.yaml against docs/petstore-interface.md', () => {
  it('has the operations of the interface, with their names, methods and paths, and no others', () => {
    expect(endpoints.map(({ operationId, method, path }) => ({ operationId, method, path }))).toEqual(
      operations.map(({ operation, method, path }) => ({ operationId: operation.operationId, method, path })),
    );
  });

  it.each(endpoints)('documents each status the interface gives $operationId, with its body', (endpoint) => {
    const documented = documentedOperation(endpoint.operationId).responses;
    for (const row of tableOf(endpoint.section, /^Responses/)) {
      // "Pets (array of Pet)", "Pet (includes the assigned id)", "Error": the schema is the first word.
      expect(documented[row.Status ?? '']?.body, `${endpoint.operationId} ${row.Status}`).toBe(row.Body?.split(' ')[0]);
    }
  });

  it('documents each error of the Errors table on the operations it names, with an Error body', () => {
    for (const row of tableOf(sectionOf(spec, 'Errors'))) {
      for (const operationId of row.Operations?.split(', ') ?? []) {
        expect(documentedOperation(operationId).responses[row['HTTP status'] ?? '']?.body).toBe('Error');
      }
    }
  });

  it.each([
    ['Pet', /^Pet \(/],
    ['NewPet', /^NewPet \(/],
    ['Error', /^Error$/],
  ] as const)('gives %s the fields of the interface, with their types, formats and whether required', (name, title) => {
    const rows = tableOf(sectionOf(spec, title));
    const schema = documentedSchema(name);
    const properties = schema.properties as Node;
    const required = schema.required as string[];
    const hasFormat = rows.every((row) => 'Format' in row);
    const fromSpec = rows.map((row) => ({
      field: row.Field,
      type: row.Type,
      ...(hasFormat && { format: row.Format }),
      required: row.Required === 'yes',
    }));
    const fromDocument = Object.entries(properties).map(([field, property]) => {
      const resolved = deref(property);
      const format = resolved.enum ? `enum ${refName(property)}` : ((resolved.format as string | undefined) ?? '-');
      return { field, type: resolved.type, ...(hasFormat && { format }), required: required.includes(field) };
    });
    expect(fromDocument).toEqual(fromSpec);
  });

  it('gives Pets as a bare array of Pet and PetStatus the values of the interface', () => {
    expect(sectionOf(spec, 'Pets').text).toContain('bare JSON array');
    expect(documentedSchema('Pets')).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Pet' } });
    const values = tableOf(sectionOf(spec, /^PetStatus/)).map((row) => row.Value);
    expect(documentedSchema('PetStatus').enum).toEqual(values);
  });

  it.each(endpoints)(
    'takes the parameters the interface gives $operationId, with their types and limits',
    (endpoint) => {
      const parameters = ((operationOf(endpoint.operationId).parameters as unknown[]) ?? []).map(deref);
      for (const table of endpoint.section.tables.filter((t) => /parameter/i.test(t.caption))) {
        const location = /^(Query|Path)/.exec(table.caption)?.[1]?.toLowerCase();
        for (const row of table.rows) {
          const parameter = parameters.find((p) => p.name === row.Name && p.in === location);
          expect(parameter, `${endpoint.operationId}: ${location} parameter ${row.Name}`).toBeDefined();
          expect(parameter?.required === true).toBe(row.Required === 'yes');
          // The contract may add limits the interface leaves unsaid (an int64's range), not change one.
          expect(parameterFacts(parameter?.schema)).toMatchObject(specParameterFacts(row));
        }
      }
    },
  );

  it('states the limits of the Limits table on the parameters they apply to', () => {
    for (const row of tableOf(sectionOf(spec, 'Limits'))) {
      // "limit query parameter minimum", "limit default when omitted"
      const [, name, limit] = /^(\w+) (?:query parameter )?(minimum|maximum|default)\b/.exec(row.Limit ?? '') ?? [];
      expect(limit, row.Limit).toBeDefined();
      const parameter = ((operationOf(row['Applies to'] ?? '').parameters as unknown[]) ?? [])
        .map(deref)
        .find((p) => p.name === name && p.in === 'query');
      expect((parameter?.schema as Node | undefined)?.[limit ?? ''], row.Limit).toBe(Number(row.Value));
    }
  });

  it('takes the request body the interface states, as the required JSON body of its schema', () => {
    for (const { section, operationId } of endpoints) {
      const bullet = [...section.bullets].find(([key]) => key.startsWith('Request body'));
      const requestBody = operationOf(operationId).requestBody as Node | undefined;
      if (!bullet) {
        expect(requestBody, operationId).toBeUndefined();
        continue;
      }
      const [, required, mediaType] = /\((required|optional), ([^)]+)\)/.exec(bullet[0]) ?? [];
      expect(requestBody?.required === true).toBe(required === 'required');
      const content = (requestBody?.content as Node | undefined)?.[mediaType ?? ''] as Node | undefined;
      expect(refName(content?.schema)).toBe(bullet[1].split(/[ .]/)[0]);
    }
  });

  it('secures every operation with the HTTP bearer scheme', () => {
    expect(sectionOf(spec, 'Authentication').text).toContain('HTTP bearer scheme');
    const schemes = (document.components as { securitySchemes: Record<string, Node> }).securitySchemes;
    for (const { operation } of operations) {
      const security = (operation.security ?? document.security) as Array<Record<string, unknown>>;
      const names = security.flatMap((requirement) => Object.keys(requirement));
      expect(names.map((name) => schemes[name])).toEqual([
        { ...schemes[names[0] ?? ''], type: 'http', scheme: 'bearer' },
      ]);
    }
  });

  it('has the version, the /v1 base and the deprecation (date and replacement) of the interface', () => {
    const versioning = sectionOf(spec, 'Versioning').text;
    expect((document.info as Node).version).toBe(
      /interface description itself is at version ([\d.]+)\./.exec(versioning)?.[1],
    );
    expect((document.servers as Node[])[0]?.url).toBe(/path segment `([^`]+)`/.exec(versioning)?.[1]);

    const deprecated = (section: SpecSection) => /^deprecated/.test(section.bullets.get('Status') ?? '');
    const removal = /removal on (\d{1,2} \w+ \d{4})/.exec(versioning)?.[1] ?? '';
    const replacement = /replacement is `([^`]+)` with the `(\w+)` filter/.exec(versioning);
    for (const { section, operationId } of endpoints) {
      const operation = operationOf(operationId);
      expect(operation.deprecated === true, operationId).toBe(deprecated(section));
      if (!deprecated(section)) continue;
      expect(operation.description).toContain(removal);
      expect(operation.description).toContain(`Use \`${replacement?.[1]}\` with the \`${replacement?.[2]}\` filter`);
    }
  });
});

/** What the interface can say of a parameter's schema: type, format, enum, minimum, maximum, default. */
function parameterFacts(schema: unknown): Node {
  const resolved = deref(schema);
  const facts: Node = { type: resolved.type };
  for (const key of ['format', 'enum', 'minimum', 'maximum', 'default']) {
    if (resolved[key] !== undefined) facts[key] = resolved[key];
  }
  return facts;
}

/** The same from a row: Type "integer" or "string (PetStatus)", Format, Constraints "minimum 1, ..." or "one of a, b". */
function specParameterFacts(row: Record<string, string>): Node {
  const facts: Node = { type: row.Type?.split(' ')[0] };
  if (row.Format && row.Format !== '-') facts.format = row.Format;
  const constraints = row.Constraints ?? '';
  const oneOf = /^one of (.+)$/.exec(constraints);
  if (oneOf?.[1]) facts.enum = oneOf[1].split(/,\s*/);
  else
    for (const [, key, value] of constraints.matchAll(/(minimum|maximum|default) (\d+)/g))
      facts[key ?? ''] = Number(value);
  return facts;
}
