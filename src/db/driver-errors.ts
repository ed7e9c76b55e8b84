import {
  MongoClientClosedError,
  MongoDriverError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { DatabaseUnavailableError } from '../errors.ts';

const DUPLICATE_KEY = 11000;
/** Pool errors the driver does not export as classes (pool cleared ones are MongoNetworkErrors). */
const POOL_UNAVAILABLE = new Set(['MongoWaitQueueTimeoutError', 'MongoPoolClosedError']);

export function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

/** Driver errors that mean "no answer from the database", as opposed to a query it refused. */
function isUnavailable(error: unknown): boolean {
  return (
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoOperationTimeoutError ||
    (error instanceof MongoDriverError && POOL_UNAVAILABLE.has(error.name)) ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoClientClosedError
  );
}

/** The one place driver errors become domain errors, so no layer above imports the driver. */
export async function translated<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    throw isUnavailable(error) ? new DatabaseUnavailableError({ cause: error }) : error;
  }
}
