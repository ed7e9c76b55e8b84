import {
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  parse,
  validate,
} from 'graphql';
import { documentIdOf, normalizeDocumentId } from './document-id.ts';
import type { PublishableDocument } from './published-documents.ts';

/** GraphQL Codegen client preset's `persisted-documents.json`, or Apollo's persisted query manifest. */
export type ManifestFormat = 'codegen' | 'apollo';

/** A document the whole file is refused for: its id and operation names as the file has them. */
export interface RefusedDocument {
  id: string;
  /** The names of its operations, when the file or the document says them. */
  name: string | null;
  reason: string;
}

export type ManifestCheck =
  | { ok: true; format: ManifestFormat; documents: PublishableDocument[] }
  | { ok: false; problem: string; refused: RefusedDocument[] };

/** One document as the file states it, before any check. */
interface ManifestEntry {
  id: string;
  text: unknown;
  /** Apollo states the operation's name beside the document. */
  name: string | null;
}

const APOLLO_FORMAT = 'apollo-persisted-query-manifest';
const NEITHER =
  'neither a GraphQL Codegen persisted-documents.json (an object of "<sha256 id>": "<document>") ' +
  `nor an Apollo persisted query manifest ("format": "${APOLLO_FORMAT}")`;
const SHA1_HEX = /^[0-9a-f]{40}$/i;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The format and the entries of a parsed file, or why it is not a manifest we read. */
function entriesOf(json: unknown): { format: ManifestFormat; entries: ManifestEntry[] } | string {
  if (!isObject(json)) return NEITHER;
  if ('format' in json) {
    if (json.format !== APOLLO_FORMAT) return `unknown format ${JSON.stringify(json.format)}: ${NEITHER}`;
    if (json.version !== 1) return `Apollo manifest version ${JSON.stringify(json.version)} is not supported (1 is)`;
    if (!Array.isArray(json.operations)) return 'an Apollo manifest needs an "operations" array';
    const entries = json.operations.map((operation: unknown, index): ManifestEntry => {
      const { id, body, name } = isObject(operation) ? operation : {};
      return {
        id: typeof id === 'string' ? id : `operations[${index}]`,
        text: body,
        name: typeof name === 'string' ? name : null,
      };
    });
    return { format: 'apollo', entries };
  }
  // Codegen's file is nothing but ids and texts; any other value means it is some other JSON file.
  if (!Object.values(json).every((value) => typeof value === 'string')) return NEITHER;
  return { format: 'codegen', entries: Object.entries(json).map(([id, text]) => ({ id, text, name: null })) };
}

const located = (error: GraphQLError) => {
  const at = error.locations?.[0];
  return at ? `${error.message} (line ${at.line}, column ${at.column})` : error.message;
};

const operationsOf = (document: DocumentNode) =>
  document.definitions.filter((definition): definition is OperationDefinitionNode => {
    return definition.kind === Kind.OPERATION_DEFINITION;
  });

/** Why the schema cannot run this parsed document, or undefined when it can. */
function schemaProblem(document: DocumentNode, schema: GraphQLSchema): string | undefined {
  const operations = operationsOf(document);
  if (operations.length === 0) return 'holds no operation';
  // graphql 16's validate passes a subscription when the schema has none: execute would refuse it.
  const unserved = operations.find((operation) => !schema.getRootType(operation.operation));
  if (unserved) return `the schema has no ${unserved.operation} type`;
  const [first, ...more] = validate(schema, document);
  if (!first) return undefined;
  return more.length === 0 ? located(first) : `${located(first)} (and ${more.length} more)`;
}

function parsed(text: string): DocumentNode | GraphQLError {
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof GraphQLError) return error;
    throw error;
  }
}

/** A document ready to publish, or why it is refused. */
function checkEntry(entry: ManifestEntry, schema: GraphQLSchema): PublishableDocument | RefusedDocument {
  const id = normalizeDocumentId(entry.id);
  const refuse = (reason: string, name = entry.name) => ({ id: id ?? JSON.stringify(entry.id), name, reason });
  if (!id && SHA1_HEX.test(entry.id)) {
    return refuse("is a SHA-1 hash, not a SHA-256 document id (codegen: leave hashAlgorithm at 'sha256')");
  }
  if (!id) return refuse('is not a SHA-256 document id (sha256:<64 hex digits>, or the 64 hex digits)');
  if (typeof entry.text !== 'string') return refuse('has no document text');
  const text = entry.text;
  const document = parsed(text);
  const operations =
    document instanceof GraphQLError
      ? []
      : operationsOf(document).map((operation) => ({ name: operation.name?.value ?? null, type: operation.operation }));
  const name = operations.flatMap((operation) => (operation.name ? [operation.name] : [])).join(', ') || entry.name;
  // The hash first: a text that is not its id's was changed after the build, whatever else is wrong with it.
  const actual = documentIdOf(text);
  if (actual !== id) return refuse(`is not the SHA-256 of its text, which is ${actual}`, name);
  if (document instanceof GraphQLError) return refuse(located(document), name);
  const problem = schemaProblem(document, schema);
  if (problem) return refuse(problem, name);
  return { id, document: text, operations };
}

/** Checks every document of a manifest (id is its text's SHA-256, it parses and validates); one bad one refuses all. */
export function checkManifest(text: string, schema: GraphQLSchema): ManifestCheck {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `not JSON (${(error as Error).message})`, refused: [] };
  }
  const read = entriesOf(json);
  if (typeof read === 'string') return { ok: false, problem: read, refused: [] };
  const { format, entries } = read;
  if (entries.length === 0) return { ok: false, problem: 'holds no documents', refused: [] };
  const documents = new Map<string, PublishableDocument>();
  const refused: RefusedDocument[] = [];
  for (const entry of entries) {
    const checked = checkEntry(entry, schema);
    if ('reason' in checked) refused.push(checked);
    // The same id twice (bare and `sha256:`) is the same text: published once.
    else if (!documents.has(checked.id)) documents.set(checked.id, checked);
  }
  if (refused.length > 0) {
    return { ok: false, problem: `${refused.length} of ${entries.length} documents are refused`, refused };
  }
  return { ok: true, format, documents: [...documents.values()] };
}
