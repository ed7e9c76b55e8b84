import { MongoNetworkError, MongoServerError, MongoWriteConcernError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { translated } from '../src/db/driver-errors.ts';
import { DatabaseUnavailableError, STORAGE_FULL_RETRY_AFTER_SECONDS, StorageFullError } from '../src/errors.ts';
import { createErrorLog, STORAGE_FULL_LOG_EVERY_MS } from '../src/graphql/error-log.ts';
import { fromDomainError } from '../src/graphql/errors.ts';
import { restErrorFromGraphQL } from '../src/rest/http-errors.ts';
import { capturingLogger } from './support/capturing-logger.ts';

/**
 * What a server answers, made into the driver's own error the way the driver does it with a reply
 * (`new MongoServerError(reply)` in its connection), so the translation meets the real class.
 */
const serverError = (reply: Record<string, unknown>) => new MongoServerError({ ok: 0, ...reply });

/** Refusals for lack of storage, as each server sends them (sources in src/db/driver-errors.ts). */
const STORAGE_FULL: Array<[string, MongoServerError]> = [
  [
    // Measured: FerretDB v1.24 on SQLite with its tmpfs full (test/disk-full.test.ts meets it for real).
    'FerretDB on SQLite: InternalError "database or disk is full"',
    serverError({
      code: 1,
      codeName: 'InternalError',
      errmsg:
        '[msg_insert.go:168 handler.(*Handler).MsgInsert] [db.go:167 fsql.(*DB).InTransaction] database or disk is full (13)',
    }),
  ],
  [
    'MongoDB OutOfDiskSpace (14031)',
    serverError({ code: 14031, codeName: 'OutOfDiskSpace', errmsg: 'No space left on device: /data/db/_tmp/file' }),
  ],
  [
    'DocumentDB gateway (Postgres DISK_FULL) as OutOfDiskSpace',
    serverError({ code: 14031, codeName: 'OutOfDiskSpace', errmsg: 'The database disk is full' }),
  ],
  [
    'an insert write error with code 14031 (insertOne throws the first write error)',
    new MongoServerError({ index: 0, code: 14031, errmsg: "Can't take a write lock while out of disk space" }),
  ],
  [
    'WiredTiger ENOSPC that did not abort mongod: UnknownError "28: No space left on device"',
    serverError({
      code: 8,
      codeName: 'UnknownError',
      errmsg: 'WiredTigerRecordStore::insertRecord 28: No space left on device',
    }),
  ],
  [
    'an Atlas shared tier over its quota: AtlasError 8000',
    serverError({
      code: 8000,
      codeName: 'AtlasError',
      errmsg: 'you are over your space quota, using 512 MB of 512 MB',
    }),
  ],
  [
    'a write concern error OutOfDiskSpace',
    new MongoWriteConcernError({
      ok: 1,
      writeConcernError: { code: 14031, codeName: 'OutOfDiskSpace', errmsg: 'out of disk space' },
    }),
  ],
];

describe('driver errors that mean the store is full', () => {
  it.each(STORAGE_FULL)(
    '%s becomes StorageFullError (503, Retry-After), keeping the driver error as cause',
    async (_, error) => {
      const failure = await translated(Promise.reject(error)).catch((caught: unknown) => caught);
      expect(failure).toBeInstanceOf(StorageFullError);
      expect(failure).toBeInstanceOf(DatabaseUnavailableError);
      expect((failure as StorageFullError).cause).toBe(error);
      expect((failure as StorageFullError).retryAfterSeconds).toBe(STORAGE_FULL_RETRY_AFTER_SECONDS);
    },
  );

  it('leaves every other server refusal as it is: a duplicate key, or an InternalError about something else', async () => {
    for (const error of [
      serverError({ code: 11000, codeName: 'DuplicateKey', errmsg: 'E11000 duplicate key error' }),
      serverError({ code: 1, codeName: 'InternalError', errmsg: '[msg_find.go:120] something else broke' }),
    ]) {
      await expect(translated(Promise.reject(error))).rejects.toBe(error);
    }
  });

  it('keeps an unreachable database a plain DatabaseUnavailableError (Retry-After 5)', async () => {
    const failure = await translated(Promise.reject(new MongoNetworkError('connection reset'))).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(DatabaseUnavailableError);
    expect(failure).not.toBeInstanceOf(StorageFullError);
    expect((failure as DatabaseUnavailableError).retryAfterSeconds).toBe(5);
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After on both faces', () => {
    const graphql = fromDomainError(new StorageFullError());
    expect(graphql.extensions).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      http: { status: 503, headers: { 'Retry-After': String(STORAGE_FULL_RETRY_AFTER_SECONDS) } },
    });
    const rest = restErrorFromGraphQL(graphql);
    expect({ code: rest.code, status: rest.status, headers: rest.headers }).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      headers: { 'Retry-After': String(STORAGE_FULL_RETRY_AFTER_SECONDS) },
    });
  });
});

describe('the log of a full store', () => {
  it('is one warning a minute at most, without a stack, counting the failures it did not write', () => {
    const { logger, lines } = capturingLogger();
    let now = 0;
    const errorLog = createErrorLog(logger, () => now);
    const cause = serverError({ code: 1, codeName: 'InternalError', errmsg: 'database or disk is full (13)' });
    for (let request = 0; request < 100; request++) {
      errorLog.log(new StorageFullError({ cause }), `req-${request}`);
      now += 100;
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, reqId: 'req-0', detail: 'database or disk is full (13)' });
    expect(lines[0]).not.toHaveProperty('err');

    now = STORAGE_FULL_LOG_EVERY_MS;
    errorLog.log(new StorageFullError({ cause }), 'req-next');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: 40, reqId: 'req-next', failedSinceLastLine: 99 });
  });
});
