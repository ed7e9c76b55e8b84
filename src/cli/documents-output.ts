import type { RefusedDocument } from '../documents/manifest.ts';
import type {
  DocumentOperation,
  PersistedDocument,
  PublishableDocument,
  PublishOutcome,
} from '../documents/persisted-document-store.ts';
import { iso, jsonAnswer, shortDate, table } from './text-format.ts';

/** `query ListPets, mutation CreatePet`: what an operator recognises a document by. */
const described = (operations: DocumentOperation[]) =>
  operations.map(({ type, name }) => `${type} ${name ?? '(anonymous)'}`).join(', ');

const plural = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;

/** Why a file was not published: the file's problem, then every refused document on a line of its own. */
export function refusalMessage(file: string, problem: string, refused: RefusedDocument[]): string {
  const lines = refused.map(({ id, name, reason }) => `  ${id}${name ? ` (${name})` : ''}: ${reason}`);
  const stored = refused.length > 0 ? ', nothing was stored' : '';
  return [`${file} was not published${stored}: ${problem}`, ...lines].join('\n');
}

export function publishedJson(outcome: PublishOutcome): string {
  return jsonAnswer({ published: outcome.published, alreadyPublished: outcome.alreadyPublished });
}

export function publishedText(file: string, documents: PublishableDocument[], outcome: PublishOutcome): string {
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

export function listJson(documents: PersistedDocument[]): string {
  return jsonAnswer(
    documents.map(({ id, operations, publishedAt, document }) => ({
      id,
      operations,
      publishedAt: iso(publishedAt),
      document,
    })),
  );
}

/** Without the texts: they are long, and `--json` has them. */
export function listText(documents: PersistedDocument[]): string {
  if (documents.length === 0) return 'No published documents.\n';
  return table([
    ['ID', 'PUBLISHED', 'OPERATIONS'],
    ...documents.map(({ id, operations, publishedAt }) => [id, shortDate(publishedAt), described(operations)]),
  ]);
}

export const removedJson = (id: string) => jsonAnswer({ id, removed: true });

export const removedText = (id: string) =>
  `Removed ${id}. Running services stop accepting it within 5 s (while they can read the database).\n`;
