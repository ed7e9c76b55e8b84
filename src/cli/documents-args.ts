import { normalizeDocumentId } from '../documents/document-id.ts';
import { type HelpCommand, onlyOne, parseCommandLine, UsageError } from './args.ts';

export type DocumentsCommand =
  | { command: 'publish'; file: string; json: boolean }
  | { command: 'list'; json: boolean }
  | { command: 'remove'; id: string; json: boolean };

export const USAGE = `Usage: npm run documents -- <command> [options]

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

export function parseDocumentsArgs(argv: string[]): DocumentsCommand | HelpCommand {
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
