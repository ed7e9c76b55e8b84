import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { ServerContext } from '../context.ts';
import { ClientGoneError, DomainError } from '../errors.ts';
import { isOwnGraphQLError, rootCause } from './masked-errors.ts';

/**
 * Logs each error a resolver threw, once, with the request's id, before Yoga masks it: bugs at error
 * level with their stack, operating conditions (database unavailable) as a warning, a client that
 * left as info. A client's own mistakes (4xx) get no line of their own: the access log has them.
 */
export function createErrorLog(logger: Logger) {
  const logged = new WeakSet<object>();

  function log(error: unknown, reqId: string | undefined): void {
    const cause = rootCause(error);
    if (typeof cause === 'object' && cause !== null) logged.add(cause);
    if (!(cause instanceof DomainError && cause.expected)) {
      logger.error({ err: cause, reqId }, (cause as Error | undefined)?.message || 'unexpected error');
    } else if (!cause.byClient) {
      logger[cause instanceof ClientGoneError ? 'info' : 'warn']({ code: cause.code, reqId }, cause.message);
    }
  }

  const plugin: Plugin = {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result }) => {
        if (!('errors' in result) || !result.errors) return;
        const reqId = (args.contextValue as Partial<ServerContext>).identity?.id;
        for (const error of result.errors) if (!isOwnGraphQLError(error)) log(error, reqId);
      },
    }),
  };

  return {
    plugin,
    log,
    /** Whether this error was logged here already (Yoga reports each error it masks once more). */
    wasLogged: (error: unknown): boolean => {
      const cause = rootCause(error);
      return typeof cause === 'object' && cause !== null && logged.has(cause);
    },
  };
}

export type ErrorLog = ReturnType<typeof createErrorLog>;
