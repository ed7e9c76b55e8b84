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
import { DatabaseUnavailableError, StorageFullError } from '../errors.ts';

const DUPLICATE_KEY = 11000;
/** MongoDB's `OutOfDiskSpace` (src/mongo/base/error_codes.yml); also what DocumentDB's gateway sends for Postgres' DISK_FULL. */
const OUT_OF_DISK_SPACE = 14031;
/**
 * Storage-full errors that come with a generic code, recognised by their text:
 * - FerretDB v1 on SQLite: code 1 `InternalError`, "[msg_insert.go:168 …] database or disk is full (13)"
 *   (SQLITE_FULL, measured on a full tmpfs);
 * - MongoDB (WiredTiger) when ENOSPC does not abort mongod: code 8 `UnknownError`, "… 28: No space left on device";
 * - MongoDB before 4.2 (MMAPv1): "Can't take a write lock while out of disk space";
 * - Atlas shared tiers: code 8000 `AtlasError`, "you are over your space quota, using 512 MB of 512 MB".
 */
const STORAGE_FULL_TEXT = /database or disk is full|no space left on device|out of disk space|over your space quota/i;
/** Pool errors the driver does not export as classes (pool cleared ones are MongoNetworkErrors). */
const POOL_UNAVAILABLE = new Set(['MongoWaitQueueTimeoutError', 'MongoPoolClosedError']);

export function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

/**
 * The server refused a write for lack of storage: a condition of the store that space freed ends,
 * not a bug. Write errors and write-concern errors are MongoServerErrors too.
 */
export function isStorageFull(error: unknown): boolean {
  if (!(error instanceof MongoServerError)) return false;
  return (
    error.code === OUT_OF_DISK_SPACE || error.codeName === 'OutOfDiskSpace' || STORAGE_FULL_TEXT.test(error.message)
  );
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
    if (isUnavailable(error)) throw new DatabaseUnavailableError({ cause: error });
    if (isStorageFull(error)) throw new StorageFullError({ cause: error });
    throw error;
  }
}
