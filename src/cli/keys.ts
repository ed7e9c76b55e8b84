// `npm run keys -- create|list|revoke`: issues and revokes the API keys the service accepts.
// stdout carries only the answer (one JSON document with --json); everything else goes to stderr.

import { createApiKeyStore, ensureApiKeyIndexes } from '../auth/api-key-store.ts';
import { type CommandContext, runCommandLine } from './command-line.ts';
import { CommandFailure } from './failures.ts';
import { type KeysCommand, parseKeysArgs, USAGE } from './keys-args.ts';
import { createdJson, createdText, listJson, listText, revokedJson, revokedText } from './keys-output.ts';

/** Ids as the store makes them; anything else is not echoed back (it may be a pasted secret). */
const KEY_ID = /^key_[0-9a-f]{16}$/;

async function runKeysCommand(command: KeysCommand, { database }: CommandContext): Promise<string> {
  const db = await database();
  const store = createApiKeyStore(db);
  switch (command.command) {
    case 'create': {
      await ensureApiKeyIndexes(db);
      const { name, expiresInDays, allowArbitraryDocuments, scopes } = command;
      const issued = await store.issue({ name, expiresInDays, allowArbitraryDocuments, scopes });
      return command.json ? createdJson(issued) : createdText(issued);
    }
    case 'list': {
      const records = await store.list();
      return command.json ? listJson(records, new Date()) : listText(records, new Date());
    }
    case 'revoke': {
      const outcome = await store.revoke(command.id);
      if (outcome.outcome === 'not-found') {
        const which = KEY_ID.test(command.id) ? `the id ${command.id}` : 'that id';
        throw new CommandFailure(`no key has ${which} (see npm run keys -- list)`);
      }
      return command.json ? revokedJson(outcome) : revokedText(outcome);
    }
  }
}

await runCommandLine({ name: 'keys', usage: USAGE, parse: parseKeysArgs, run: runKeysCommand });
