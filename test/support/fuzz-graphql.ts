/**
 * GraphQL documents generated from the published schema (schema/schema.graphql), for the fuzz suite:
 * real fields and made-up ones, arguments of the right and the wrong type, variables, aliases,
 * directives, inline and named fragments, several operations, and documents that are not GraphQL.
 */
import { readFileSync } from 'node:fs';
import fc, { type Arbitrary } from 'fast-check';
import {
  buildSchema,
  type GraphQLField,
  type GraphQLInputType,
  GraphQLObjectType,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
} from 'graphql';

const schema = buildSchema(readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8'));
const queryType = schema.getQueryType() as GraphQLObjectType;
const mutationType = schema.getMutationType() as GraphQLObjectType;

/** Deeper than the depth limit allows, so some documents are refused for it. */
const MAX_DEPTH = 8;
const VARIABLES = ['$v0', '$v1', '$v2', '$v3'];
const FRAGMENTS = ['F0', 'F1', 'F2'];

const NOTHING = fc.constant('');

/** A string as GraphQL writes it (JSON's escapes are GraphQL's), of any Unicode, sometimes long. */
const stringLiteral = fc
  .oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 30 }), fc.constant('x'.repeat(300)))
  .map((text) => JSON.stringify(text));

const WRONG_VALUES = [
  'null',
  '"x"',
  '1.5',
  'true',
  '[]',
  '{}',
  'NOT_A_VALUE',
  '99999999999999999999',
  '-1',
  '0',
  '$nope',
];
const wrongValue = fc.constantFrom(...WRONG_VALUES);
const VARIABLE_TYPES = ['Int', 'Int!', 'ID!', 'String', 'PetStatus', 'NewPet!', '[Int]', 'Boolean', 'Int64', 'Nope'];

/**
 * Operations and fragments of the schema. With mistakes, each choice is now and then a wrong one (an
 * unknown field or argument, a value of the wrong type, a misplaced directive, a missing selection);
 * without, every document is one the schema accepts, unless the dice pick a limit it breaks.
 */
function schemaDocuments(withMistakes: boolean) {
  /** Mostly `usual`, one time in `oneIn` `unusual`; never `unusual` in a document without mistakes. */
  const rarely = <T>(usual: Arbitrary<T>, unusual: Arbitrary<T>, oneIn = 12): Arbitrary<T> =>
    withMistakes ? fc.oneof({ weight: oneIn - 1, arbitrary: usual }, { weight: 1, arbitrary: unusual }) : usual;

  /** Every required one (almost always: leaving one out is a mistake worth making now and then) and some of the others. */
  function requiredAndSome<T>(all: readonly T[], isRequired: (item: T) => boolean): Arbitrary<T[]> {
    const required = all.filter(isRequired);
    const optional = all.filter((item) => !isRequired(item));
    return fc
      .tuple(rarely(fc.constant(required), fc.subarray(required), 20), fc.subarray(optional))
      .map(([some, others]) => [...some, ...others]);
  }

  function rightValue(type: GraphQLInputType, depth: number): Arbitrary<string> {
    const nullable = getNullableType(type);
    if (isListType(nullable)) {
      return fc.array(rightValue(nullable.ofType, depth + 1), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`);
    }
    if (isEnumType(nullable)) return fc.constantFrom(...nullable.getValues().map((value) => value.name));
    if (isInputObjectType(nullable)) {
      const fields = Object.values(nullable.getFields());
      return requiredAndSome(fields, (field) => isNonNullType(field.type))
        .chain((chosen) =>
          fc.tuple(...chosen.map((field) => valueFor(field.type, depth + 1).map((v) => `${field.name}: ${v}`))),
        )
        .map((pairs) => `{ ${pairs.join(', ')} }`);
    }
    switch (nullable.name) {
      case 'Int':
        return fc.oneof(fc.integer({ min: -3, max: 120 }), fc.constantFrom(2 ** 31 - 1, 2 ** 31)).map(String);
      case 'Int64':
        return fc.oneof(fc.integer({ min: -3, max: 1000 }), fc.constantFrom(2 ** 53 - 1, 2 ** 53)).map(String);
      case 'Float':
        return fc.double({ noNaN: true, noDefaultInfinity: true }).map(String);
      case 'Boolean':
        return fc.boolean().map(String);
      case 'ID':
        return fc.oneof(
          fc.nat({ max: 500 }).map((n) => `"${n}"`),
          fc.nat({ max: 500 }).map(String),
          stringLiteral,
        );
      default:
        return stringLiteral;
    }
  }

  /** Mostly a value of the right type; sometimes a wrong one, or a variable of whatever type it was declared with. */
  function valueFor(type: GraphQLInputType, depth: number): Arbitrary<string> {
    if (depth > 3) return wrongValue;
    return rarely(rightValue(type, depth), fc.oneof(wrongValue, fc.constantFrom(...VARIABLES)), 25);
  }

  const alias = fc.oneof(
    { weight: 3, arbitrary: NOTHING },
    {
      weight: 1,
      arbitrary: rarely(fc.constantFrom('a1: ', 'a2: ', 'a3: '), fc.constantFrom('id: ', 'pets: ', '_: '), 4),
    },
  );
  const directives = fc.oneof(
    { weight: 6, arbitrary: NOTHING },
    {
      weight: 1,
      arbitrary: rarely(
        fc.constantFrom(' @include(if: true)', ' @skip(if: false)', ' @skip(if: true)'),
        fc.constantFrom(
          ' @skip(if: "no")',
          ' @deprecated',
          ' @unknown',
          ' @include',
          ' @skip(if: true) @skip(if: true)',
          ' @include(if: $v0)',
        ),
        3,
      ),
    },
  );

  function argumentsOf(field: GraphQLField<unknown, unknown>): Arbitrary<string> {
    const args = requiredAndSome(field.args, (arg) => isNonNullType(arg.type)).chain((chosen) =>
      fc.tuple(...chosen.map((arg) => valueFor(arg.type, 0).map((v) => `${arg.name}: ${v}`))),
    );
    const unknown = rarely(fc.constant(undefined), fc.constantFrom('nope: 1', 'limit: 5', 'first: "x"'), 15);
    return fc.tuple(args, unknown).map(([pairs, extra]) => {
      const all = extra ? [...pairs, extra] : pairs;
      return all.length ? `(${all.join(', ')})` : '';
    });
  }

  function fieldSelection(field: GraphQLField<unknown, unknown>, depth: number): Arbitrary<string> {
    const named = getNamedType(field.type);
    const sub: Arbitrary<string> = isObjectType(named)
      ? rarely(selectionSet(named, depth + 1), NOTHING, 30)
      : rarely(NOTHING, fc.constant(' { id }'), 30);
    return fc
      .tuple(alias, argumentsOf(field), directives, sub)
      .map(([aliased, args, directed, selection]) => `${aliased}${field.name}${args}${directed}${selection}`);
  }

  function selectionSet(type: GraphQLObjectType, depth: number): Arbitrary<string> {
    if (depth > MAX_DEPTH) return fc.constant(' { __typename }');
    const fields = Object.values(type.getFields());
    if (type === queryType) fields.push(SchemaMetaFieldDef, TypeMetaFieldDef);
    const selection = rarely(
      fc.oneof(
        { weight: 20, arbitrary: fc.constantFrom(...fields).chain((field) => fieldSelection(field, depth)) },
        { weight: 1, arbitrary: fc.constant('__typename') },
        { weight: 1, arbitrary: selectionSet(type, depth + 1).map((inner) => `... on ${type.name}${inner}`) },
      ),
      fc.oneof(
        fc.constantFrom('notAField', 'name', 'pets { id }', '__schema'),
        fc.constantFrom(...FRAGMENTS).map((fragment) => `...${fragment}`),
      ),
      15,
    );
    // One selection per response name: the same field twice with other arguments is a conflict, a
    // mistake the generator makes often enough without that.
    const responseName = (selection: string) => /^[^(:{ @]*/.exec(selection)?.[0] ?? selection;
    return fc
      .uniqueArray(selection, { minLength: 1, maxLength: depth > 2 ? 2 : 4, selector: responseName })
      .map((list) => ` { ${list.join(' ')} }`);
  }

  const variableDefinitions = fc
    .subarray(VARIABLES)
    .chain((names) => fc.tuple(...names.map((v) => fc.constantFrom(...VARIABLE_TYPES).map((type) => `${v}: ${type}`))))
    .map((definitions) => (definitions.length ? `(${definitions.join(', ')})` : ''));
  /** Mostly none: a variable defined and not used is an error, and most documents use none. */
  const someVariableDefinitions = rarely(NOTHING, variableDefinitions, 5);

  const operation = fc
    .tuple(
      rarely(fc.constantFrom('query', 'query', 'query', 'mutation', ''), fc.constant('subscription'), 10),
      fc.constantFrom('', 'Q'),
      someVariableDefinitions,
    )
    .chain(([kind, opName, variables]) => {
      const root = kind === 'mutation' ? mutationType : queryType;
      const head = kind === '' ? '' : `${kind} ${opName}${variables}`;
      return fc
        .tuple(selectionSet(root, 1), rarely(NOTHING, directives, 8))
        .map(([selection, directed]) => `${head}${directed}${selection}`);
    });

  const fragment = fc
    .tuple(
      fc.constantFrom(...FRAGMENTS),
      rarely(fc.constantFrom('Pet', 'Query', 'PetConnection'), fc.constant('Nope'), 8),
    )
    .chain(([fragmentName, on]) => {
      const type = schema.getType(on);
      const body = type instanceof GraphQLObjectType ? selectionSet(type, 3) : fc.constant(' { id }');
      return body.map((selection) => `fragment ${fragmentName} on ${on}${selection}`);
    });

  return { operation, fragment, rarely };
}

/** A page written as codegen clients write it: named fragments, variables, nothing wrong. */
const codegenStyle = fc
  .tuple(fc.integer({ min: 1, max: 100 }), fc.constantFrom('AVAILABLE', 'SOLD', 'PENDING'), fc.boolean())
  .map(([limit, status, connection]) =>
    connection
      ? `query Page($first: Int, $status: PetStatus) { petsConnection(first: $first, status: $status) { edges { cursor node { ...PetFields } } pageInfo { ...PageFields } } }
fragment PetFields on Pet { id name categoryId status }
fragment PageFields on PageInfo { hasNextPage endCursor }`
      : `query List { pets(limit: ${limit}, status: ${status}) { ...PetFields ... on Pet { id } } }
fragment PetFields on Pet { id name ...More }
fragment More on Pet { categoryId status }`,
  );

/** The fragment chain of the issue: each level spreads the next twice, so naive walks double per level. */
const fragmentChain = fc.integer({ min: 2, max: 40 }).map((levels) => {
  const parts = ['query Chain { ...L0 }'];
  for (let level = 0; level < levels; level++)
    parts.push(`fragment L${level} on Query { ...L${level + 1} ...L${level + 1} }`);
  parts.push(`fragment L${levels} on Query { __typename }`);
  return parts.join('\n');
});

/** Text that is not a GraphQL document, or one cut short. */
const notGraphQL = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '{',
    '}',
    '{ pets { id }',
    'query {',
    '"unterminated',
    '# only a comment',
    '',
    '{ a: __typename '.repeat(50),
  ),
);

const withMistakes = schemaDocuments(true);
const withoutMistakes = schemaDocuments(false);

/** One or (rarely) several operations, and (rarely) fragments beside them. */
function documentOf({ operation, fragment, rarely }: ReturnType<typeof schemaDocuments>): Arbitrary<string> {
  const operations = rarely(
    operation,
    fc.array(operation, { minLength: 2, maxLength: 3 }).map((ops) => ops.join('\n')),
    8,
  );
  const fragments = rarely(fc.constant<string[]>([]), fc.array(fragment, { minLength: 1, maxLength: 2 }), 6);
  return fc.tuple(operations, fragments).map(([ops, frags]) => [ops, ...frags].join('\n'));
}

/** A GraphQL document: mostly generated from the schema, sometimes hostile in shape or not GraphQL at all. */
export const graphQLDocument: Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: documentOf(withoutMistakes) },
  { weight: 6, arbitrary: documentOf(withMistakes) },
  { weight: 3, arbitrary: codegenStyle },
  { weight: 1, arbitrary: fragmentChain },
  { weight: 2, arbitrary: notGraphQL },
);

/** Variables for a document: values of the right and the wrong type, unknown ones, now and then a great many. */
export const graphQLVariables: Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.dictionary(
      fc.constantFrom('v0', 'v1', 'v2', 'v3', 'first', 'status', '__proto__', 'constructor'),
      fc.jsonValue({ maxDepth: 3 }),
      { maxKeys: 5 },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record(
      { first: fc.integer({ min: -1, max: 120 }), status: fc.constantFrom('SOLD', 'AVAILABLE', 'sold') },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      v2: fc.record({
        name: fc.string({ unit: 'binary', maxLength: 20 }),
        categoryId: fc.integer({ min: -1, max: 9 }),
      }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 3000 })
      .map((count) => ({ v2: Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, i])) })),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
