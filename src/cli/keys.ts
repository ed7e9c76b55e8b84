// `npm run keys -- create|list|revoke`: issues and revokes the API keys the service accepts.
// stdout carries only the answer (one JSON document with --json); everything else goes to stderr.

import type { Db } from 'mongodb';
import { MongoError } from 'mongodb';
import { createApiKeyStore, ensureApiKeyIndexes } from '../auth/api-key-store.ts';
import { loadConfig } from '../config.ts';
import { DataDirInUseError } from '../db/data-dir-lock.ts';
import { NoEmbeddedDatabaseError } from '../db/embedded.ts';
import { DatabaseUnavailableError } from '../errors.ts';
import { createCleanup } from './cleanup.ts';
import { type KeysCommand, parseKeysArgs, USAGE, UsageError } from './keys-args.ts';
import { CommandFailure, openKeysDatabase } from './keys-database.ts';
import { createdJson, createdText, listJson, listText, revokedJson, revokedText } from './keys-output.ts';

/** Ids as the store makes them; anything else is not echoed back (it may be a pasted secret). */
const KEY_ID = /^key_[0-9a-f]{16}$/;

const log = (message: string) => process.stderr.write(`keys: ${message}\n`);

/** Runs one command against the database; returns what goes to stdout. */
async function runCommand(command: Exclude<KeysCommand, { command: 'help' }>, db: Db): Promise<string> {
  const store = createApiKeyStore(db);
  switch (command.command) {
    case 'create': {
      await ensureApiKeyIndexes(db);
      const issued = await store.issue({ name: command.name, expiresInDays: command.expiresInDays });
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

/** Expected failures in one line; only a bug earns a stack. */
function describeFailure(error: unknown): string {
  if (error instanceof CommandFailure || error instanceof DataDirInUseError) return error.message;
  if (error instanceof NoEmbeddedDatabaseError) return error.message;
  if (error instanceof MongoError) return `the database refused: ${error.message}`;
  if (error instanceof DatabaseUnavailableError) return 'the database did not answer in time';
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return 'the database did not answer in time';
  }
  return `unexpected failure: ${error instanceof Error ? error.stack : String(error)}`;
}

async function main(argv: string[]): Promise<number> {
  let command: KeysCommand;
  try {
    command = parseKeysArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\nRun npm run keys -- --help for the usage.`);
    return 2;
  }
  if (command.command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    log(`invalid configuration:\n${loaded.problems.map((problem) => `  - ${problem}`).join('\n')}`);
    return 2;
  }
  const cleanup = createCleanup(log);
  cleanup.onSignals();
  try {
    const database = await openKeysDatabase(loaded.config, log, cleanup);
    process.stdout.write(await runCommand(command, database.db));
    return 0;
  } catch (error) {
    log(describeFailure(error));
    return 1;
  } finally {
    await cleanup.run();
  }
}

process.exitCode = await main(process.argv.slice(2));
// Everything was closed; should a driver timer linger anyway, it does not hold the shell prompt.
setTimeout(() => process.exit(), 1_000).unref();
