import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createApiKeyVerifier } from './auth/api-keys.ts';
import { createContextFactory } from './context.ts';
import { createMaskError } from './graphql/masked-errors.ts';
import { schema } from './graphql/schema/index.ts';
import { useVariableErrorCodes } from './graphql/variable-errors.ts';
import type { PetRepository } from './pets/pet-repository.ts';
import { useRestAdapter } from './rest/rest-plugin.ts';

export interface AppDeps {
  pets: PetRepository;
  apiKeys: readonly string[];
  logger: Logger;
  restBasePath: string;
  maxBodyBytes: number;
  openApiDocument: object;
}

const EXAMPLE_OPERATION = /* GraphQL */ `# Every request needs your API key: set it in the Headers tab below.
query AvailablePets {
  pets(status: AVAILABLE, limit: 10) {
    id
    name
    categoryId
    status
  }
}

mutation AddPet {
  createPet(input: { name: "Rex", categoryId: 1, status: AVAILABLE }) {
    id
    name
  }
}
`;

/** Yoga speaks through this adapter so its diagnostics land in our structured log. */
function yogaLogger(logger: Logger) {
  return {
    debug: (...args: unknown[]) => logger.debug(args.map(String).join(' ')),
    info: (...args: unknown[]) => logger.info(args.map(String).join(' ')),
    warn: (...args: unknown[]) => logger.warn(args.map(String).join(' ')),
    error: (...args: unknown[]) => logger.error(args.map(String).join(' ')),
  };
}

/** Builds the service (GraphQL at /graphql, GraphiQL, REST under restBasePath); never listens. */
export function createApp(deps: AppDeps) {
  const verifyApiKey = createApiKeyVerifier(deps.apiKeys);
  const createContext = createContextFactory({ pets: deps.pets, verifyApiKey, logger: deps.logger });

  // Reject a missing or bad key before parsing, so unauthenticated callers learn nothing of the schema.
  const useEarlyAuth: Plugin = {
    onParams: ({ request }) => {
      createContext({ request } as Parameters<typeof createContext>[0]);
    },
  };

  return createYoga({
    schema,
    context: createContext,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/health',
    landingPage: false,
    // Server-to-server clients and same-origin GraphiQL need no CORS; opening it is a deployment decision.
    cors: false,
    renderGraphiQL,
    graphiql: {
      title: 'Petstore GraphQL',
      defaultQuery: EXAMPLE_OPERATION,
      headers: JSON.stringify({ Authorization: 'Bearer <API_KEY>' }, null, 2),
      shouldPersistHeaders: true,
    },
    maskedErrors: { maskError: createMaskError(deps.logger) },
    logging: yogaLogger(deps.logger),
    plugins: [
      useEarlyAuth,
      useVariableErrorCodes(),
      useRestAdapter({
        schema,
        basePath: deps.restBasePath,
        maxBodyBytes: deps.maxBodyBytes,
        openApiDocument: deps.openApiDocument,
        logger: deps.logger,
      }),
    ],
  });
}

export type App = ReturnType<typeof createApp>;
