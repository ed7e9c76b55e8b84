import { createYoga, type YogaServerOptions } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context, ServerContext } from '../context.ts';
import type { ErrorLog } from '../graphql/error-log.ts';
import { maskError } from '../graphql/errors.ts';
import { schema } from '../graphql/schema/index.ts';
import { createYogaLogger } from './yoga-logger.ts';

export const GRAPHQL_ENDPOINT = '/graphql';

/** Yoga's options but its plugins: the edge in front of it answers health, GraphiQL and authentication. */
export function yogaOptions(options: {
  createContext: (serverContext: ServerContext) => Context;
  logger: Logger;
  /** Shared with the direct execution, so an error is logged once whichever path ran it. */
  errorLog: ErrorLog;
}): YogaServerOptions<ServerContext, Context> {
  return {
    schema,
    context: options.createContext,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    graphiql: false,
    landingPage: false,
    // Server-to-server clients and same-origin GraphiQL need no CORS; opening it is a deployment decision.
    cors: false,
    // Nothing here takes file uploads; multipart parsing would only be more to attack.
    multipart: false,
    // The edge reads and limits bodies: Yoga's own limiter costs throughput (docs/benchmarks.md).
    maxRequestBodySize: false,
    // GraphQL-over-HTTP's persisted documents: a POST body may name one instead of sending a query.
    extraParamNames: ['documentId'],
    // isDev false: stack traces never reach clients, whatever NODE_ENV says.
    maskedErrors: { maskError, isDev: false },
    logging: createYogaLogger(options.logger, options.errorLog),
  };
}

/**
 * Yoga for GraphQL execution only, its plugins the Yoga halves of the execution rules. REST, and
 * GraphQL documents Yoga has validated before, run the same rules' direct halves (direct-execution.ts).
 */
export function createGraphQLServer(
  options: Parameters<typeof yogaOptions>[0] & Pick<YogaServerOptions<ServerContext, Context>, 'plugins'>,
) {
  return createYoga<ServerContext, Context>({ ...yogaOptions(options), plugins: options.plugins });
}

export type GraphQLServer = ReturnType<typeof createGraphQLServer>;
