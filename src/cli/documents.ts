// `npm run documents -- publish|list|remove`: the trusted documents, which clients send by id.
// stdout carries only the answer (one JSON document with --json); everything else goes to stderr.

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { checkManifest } from '../documents/manifest.ts';
import { createPersistedDocumentStore, type PublishableDocument } from '../documents/persisted-document-store.ts';
import { schema } from '../graphql/schema/index.ts';
import { type CommandContext, runCommandLine } from './command-line.ts';
import { type DocumentsCommand, parseDocumentsArgs, USAGE } from './documents-args.ts';
import {
  listJson,
  listText,
  publishedJson,
  publishedText,
  refusalMessage,
  removedJson,
  removedText,
} from './documents-output.ts';
import { CommandFailure } from './failures.ts';

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
      return command.json ? publishedJson(outcome) : publishedText(command.file, documents, outcome);
    }
    case 'list': {
      const documents = await createPersistedDocumentStore(await database()).list();
      return command.json ? listJson(documents) : listText(documents);
    }
    case 'remove': {
      if (!(await createPersistedDocumentStore(await database()).remove(command.id))) {
        throw new CommandFailure(`no published document has the id ${command.id} (see npm run documents -- list)`);
      }
      return command.json ? removedJson(command.id) : removedText(command.id);
    }
  }
}

await runCommandLine({ name: 'documents', usage: USAGE, parse: parseDocumentsArgs, run: runDocumentsCommand });
