import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { ServerContext } from '../context.ts';
import { ClientGoneError, DomainError, StorageFullError } from '../errors.ts';
import { isOwnGraphQLError, rootCause } from './errors.ts';
import type { ExecutionHooks } from './execution-hooks.ts';

/** A full store fails every write alike: one line this often says so, with how many failed since. */
export const STORAGE_FULL_LOG_EVERY_MS = 60_000;

/** What the database said, for the operator: the driver's message, never its stack. */
function detailOf(error: StorageFullError): string | undefined {
  return error.cause instanceof Error ? error.cause.message : undefined;
}

/**
 * Logs each error a resolver threw, once, before Yoga masks it: bugs with their stack, conditions as
 * warnings, a client that left as info, 4xx not at all (the access log has them), a full store once a minute.
 */
export function createErrorLog(logger: Logger, now: () => number = Date.now) {
  const logged = new WeakSet<object>();
  let storageFullLoggedAt = Number.NEGATIVE_INFINITY;
  let storageFullUnlogged = 0;

  function logStorageFull(error: StorageFullError, reqId: string | undefined): void {
    if (now() - storageFullLoggedAt < STORAGE_FULL_LOG_EVERY_MS) {
      storageFullUnlogged++;
      return;
    }
    const failedSinceLastLine = storageFullUnlogged;
    storageFullLoggedAt = now();
    storageFullUnlogged = 0;
    logger.warn(
      { code: error.code, reqId, detail: detailOf(error), failedSinceLastLine },
      'the database cannot write: its storage is full; writes answer 503 until space is freed (at most one line a minute)',
    );
  }

  function log(error: unknown, reqId: string | undefined): void {
    const cause = rootCause(error);
    if (typeof cause === 'object' && cause !== null) logged.add(cause);
    if (!(cause instanceof DomainError && cause.expected)) {
      logger.error({ err: cause, reqId }, (cause as Error | undefined)?.message || 'unexpected error');
    } else if (cause instanceof StorageFullError) {
      logStorageFull(cause, reqId);
    } else if (!cause.byClient) {
      logger[cause instanceof ClientGoneError ? 'info' : 'warn']({ code: cause.code, reqId }, cause.message);
    }
  }

  /** Every error of a result that a resolver threw (our own GraphQLErrors are the client's, not logged). */
  function logResultErrors(errors: readonly unknown[], reqId: string | undefined): void {
    for (const error of errors) if (!isOwnGraphQLError(error)) log(error, reqId);
  }

  const afterExecution: ExecutionHooks = {
    onExecuteDone: ({ args, result }) => {
      if (!('errors' in result) || !result.errors) return;
      logResultErrors(result.errors, (args.contextValue as Partial<ServerContext>).exchange?.id);
    },
  };
  const plugin: Plugin = { onExecute: () => afterExecution };

  return {
    plugin,
    log,
    /** The direct execution's half: each error a resolver threw, logged once (masking comes after). */
    logged(result: ExecutionResult, reqId: string): ExecutionResult {
      if (result.errors?.length) logResultErrors(result.errors, reqId);
      return result;
    },
    /** Whether this error was logged here already (Yoga reports each error it masks once more). */
    wasLogged: (error: unknown): boolean => {
      const cause = rootCause(error);
      return typeof cause === 'object' && cause !== null && logged.has(cause);
    },
  };
}

export type ErrorLog = ReturnType<typeof createErrorLog>;
