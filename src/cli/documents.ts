// `npm run documents -- publish|list|remove`: the trusted documents, which clients send by id.
// stdout carries only the answer (one JSON document with --json); everything else goes to stderr.

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { normalizeDocumentId } from '../documents/document-id.ts';
import { checkManifest, type RefusedDocument } from '../documents/manifest.ts';
import {
  createPersistedDocumentStore,
  type DocumentOperation,
  type PersistedDocument,
  type PublishableDocument,
  type PublishOutcome,
} from '../documents/published-documents.ts';
import { schema } from '../graphql/schema/index.ts';
import type { CommandContext, HelpCommand } from './command-line.ts';
import { CommandFailure, onlyOne, parseCommandLine, runCommandLine, UsageError } from './command-line.ts';
import { jsonAnswer, shortDate, table } from './text-format.ts';

type DocumentsCommand =
  | { command: 'publish'; file: string; json: boolean }
  | { command: 'list'; json: boolean }
  | { command: 'remove'; id: string; json: boolean };

const USAGE = `Usage: npm run documents -- <command> [options]

Publishes, lists and removes the trusted documents (collection persistedDocuments of MONGODB_DB):
the GraphQL documents clients send by id, and the only ones issued keys may run while the service
runs with TRUSTED_DOCUMENTS=enforce (unless created with npm run keys -- create --allow-arbitrary-documents).

Commands:
  publish FILE  publish every document of FILE, or none of them. FILE is GraphQL Codegen's
                persisted-documents.json (client preset, persistedDocuments: true) or Apollo's
                persisted query manifest. Each id must be the SHA-256 of its document's exact text,
                and each document must validate against the service's schema. Publishing a
                document again changes nothing
  list          every published document: id, operations, when it was published
  remove ID     stop serving a document; ID is sha256:<64 hex digits>, or the 64 hex digits

Options:
  --json      print one JSON document on stdout and nothing else there
              (run npm run --silent documents -- ..., or npm prints its banner on stdout too)
  -h, --help  this help

Running services serve what was published, and refuse what was removed, within 5 s.

Environment: MONGODB_URI, MONGODB_DB, DATA_DIR, as for the service. Without MONGODB_URI the command
uses the embedded database of the service running on DATA_DIR, or starts it for its own duration.
Exit status: 0 done; 1 failed (FILE unreadable or refused, so nothing was published; unknown id;
database unreachable); 2 wrong usage or configuration.`;

function parseDocumentsArgs(argv: string[]): DocumentsCommand | HelpCommand {
  const { values, positionals } = parseCommandLine(argv, {
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') return { command: 'help' };
  switch (command) {
    case 'publish':
      return { command, file: onlyOne('publish', 'a FILE', rest), json: values.json };
    case 'list':
      if (rest.length > 0) throw new UsageError('list takes no arguments');
      return { command, json: values.json };
    case 'remove': {
      const given = onlyOne('remove', 'the ID of a document', rest);
      const id = normalizeDocumentId(given);
      if (!id) {
        throw new UsageError(`remove takes a document id, sha256:<64 hex digits> or the 64 hex digits, not "${given}"`);
      }
      return { command, id, json: values.json };
    }
    default:
      throw new UsageError(`unknown command "${command}": use publish, list or remove`);
  }
}

/** `query ListPets, mutation CreatePet`: what an operator recognises a document by. */
const described = (operations: DocumentOperation[]) =>
  operations.map(({ type, name }) => `${type} ${name ?? '(anonymous)'}`).join(', ');

const plural = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;

/** Why a file was not published: the file's problem, then every refused document on a line of its own. */
function refusalMessage(file: string, problem: string, refused: RefusedDocument[]): string {
  const lines = refused.map(({ id, name, reason }) => `  ${id}${name ? ` (${name})` : ''}: ${reason}`);
  const stored = refused.length > 0 ? ', nothing was stored' : '';
  return [`${file} was not published${stored}: ${problem}`, ...lines].join('\n');
}

function publishedText(file: string, documents: PublishableDocument[], outcome: PublishOutcome): string {
  const stored = new Set(outcome.published);
  const counts = `${outcome.published.length} new, ${outcome.alreadyPublished.length} already published`;
  return [
    `Published ${plural(documents.length, 'document')} (${counts}) from ${file}.`,
    '',
    table([
      ['ID', 'STATUS', 'OPERATIONS'],
      ...documents.map(({ id, operations }) => [
        id,
        stored.has(id) ? 'new' : 'already published',
        described(operations),
      ]),
    ]),
    stored.size > 0
      ? 'Running services serve the new ones within 5 s (while they can read the database).\n'
      : 'Nothing changed: every document was published already.\n',
  ].join('\n');
}

/** Without the texts: they are long, and `--json` has them. */
function listText(documents: PersistedDocument[]): string {
  if (documents.length === 0) return 'No published documents.\n';
  return table([
    ['ID', 'PUBLISHED', 'OPERATIONS'],
    ...documents.map(({ id, operations, publishedAt }) => [id, shortDate(publishedAt), described(operations)]),
  ]);
}

/** FILE's documents, every one checked, before the database is opened; CommandFailure if any is refused. */
async function publishable(file: string): Promise<PublishableDocument[]> {
  let text: string;
  try {
    // npm runs scripts in the package's directory: FILE is relative to where the operator ran npm.
    text = await readFile(resolve(process.env.INIT_CWD ?? process.cwd(), file), 'utf8');
  } catch (error) {
    throw new CommandFailure(`cannot read ${file}: ${(error as Error).message}`);
  }
  const checked = checkManifest(text, schema);
  if (!checked.ok) throw new CommandFailure(refusalMessage(file, checked.problem, checked.refused));
  return checked.documents;
}

async function runDocumentsCommand(command: DocumentsCommand, { database }: CommandContext): Promise<string> {
  switch (command.command) {
    case 'publish': {
      const documents = await publishable(command.file);
      const outcome = await createPersistedDocumentStore(await database()).publish(documents);
      const { published, alreadyPublished } = outcome;
      return command.json
        ? jsonAnswer({ published, alreadyPublished })
        : publishedText(command.file, documents, outcome);
    }
    case 'list': {
      const documents = await createPersistedDocumentStore(await database()).list();
      // Dates answer in ISO 8601, as JSON.stringify writes them.
      return command.json ? jsonAnswer(documents) : listText(documents);
    }
    case 'remove': {
      if (!(await createPersistedDocumentStore(await database()).remove(command.id))) {
        throw new CommandFailure(`no published document has the id ${command.id} (see npm run documents -- list)`);
      }
      if (command.json) return jsonAnswer({ id: command.id, removed: true });
      return `Removed ${command.id}. Running services stop accepting it within 5 s (while they can read the database).\n`;
    }
  }
}

await runCommandLine({ name: 'documents', usage: USAGE, parse: parseDocumentsArgs, run: runDocumentsCommand });
