import { MongoError } from 'mongodb';
import { DataDirInUseError } from '../db/data-dir-lock.ts';
import { NoEmbeddedDatabaseError } from '../db/embedded.ts';
import { DatabaseUnavailableError } from '../errors.ts';

/** An expected failure of a command that was used right: said on stderr, exit 1. */
export class CommandFailure extends Error {
  override name = 'CommandFailure';
}

/** Expected failures in words; only a bug earns a stack. */
export function describeFailure(error: unknown): string {
  if (error instanceof CommandFailure || error instanceof DataDirInUseError) return error.message;
  if (error instanceof NoEmbeddedDatabaseError) return error.message;
  if (error instanceof MongoError) return `the database refused: ${error.message}`;
  if (error instanceof DatabaseUnavailableError) return 'the database did not answer in time';
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return 'the database did not answer in time';
  }
  return `unexpected failure: ${error instanceof Error ? error.stack : String(error)}`;
}
