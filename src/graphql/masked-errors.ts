import { MongoNetworkError, MongoServerSelectionError } from 'mongodb';
import { maskError as yogaMaskError, type YogaServerOptions } from 'graphql-yoga';
import type { Logger } from 'pino';
import { serviceUnavailable } from './errors.ts';

type MaskError = NonNullable<Exclude<YogaServerOptions<object, object>['maskedErrors'], boolean | undefined>>['maskError'];

function rootCause(error: unknown): unknown {
  let current = error;
  while (current instanceof Error && 'originalError' in current && current.originalError) current = current.originalError;
  return current;
}

/** An unreachable database is the operator's problem, not a bug: 503, and say so. Everything else is masked and logged. */
export function createMaskError(logger: Logger): MaskError {
  return (error, message, isDev) => {
    const cause = rootCause(error);
    if (cause instanceof MongoServerSelectionError || cause instanceof MongoNetworkError) {
      logger.error({ err: cause }, 'database unreachable');
      return serviceUnavailable();
    }
    // Yoga hands every error over, our own GraphQLErrors included; only what it masks is a bug.
    const masked = yogaMaskError(error, message, isDev);
    if (masked !== error) logger.error({ err: cause }, 'unexpected error');
    return masked;
  };
}
