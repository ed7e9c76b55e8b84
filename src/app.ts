import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createApiKeyVerifier } from './auth/api-keys.ts';
import { useApiKeyAuth } from './auth/use-api-key-auth.ts';
import { createContextFactory } from './context.ts';
import { createMaskError } from './graphql/masked-errors.ts';
import { useQueryLimits } from './graphql/query-limits.ts';
import { schema } from './graphql/schema/index.ts';
import { useVariableErrorCodes } from './graphql/variable-errors.ts';
import type { PetRepository } from './pets/pet-repository.ts';
import { useReadinessCheck } from './readiness.ts';
import { useRestAdapter } from './rest/rest-plugin.ts';

export interface AppDeps {
  pets: PetRepository;
  apiKeys: readonly string[];
  logger: Logger;
  restBasePath: string;
  maxBodyBytes: number;
  openApiDocument: object;
  /** Resolves when the database answers; backs `GET /ready`. */
  checkDatabase: () => Promise<void>;
}

const GRAPHQL_ENDPOINT = '/graphql';

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

/** Yoga speaks through this adapter so its diagnostics land in our structured log, errors with stacks. */
function yogaLogger(logger: Logger) {
  const forward =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) => {
      const err = args.find((arg) => arg instanceof Error);
      const text = args.filter((arg) => !(arg instanceof Error)).map(String).join(' ');
      logger[level](err ? { err } : {}, text || (err as Error | undefined)?.message || 'yoga');
    };
  return { debug: forward('debug'), info: forward('info'), warn: forward('warn'), error: forward('error') };
}

/** Builds the service (GraphQL at /graphql, GraphiQL, REST under restBasePath); never listens. */
export function createApp(deps: AppDeps) {
  const verifyApiKey = createApiKeyVerifier(deps.apiKeys);
  const createContext = createContextFactory({ pets: deps.pets, verifyApiKey, logger: deps.logger });

  return createYoga({
    schema,
    context: createContext,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    healthCheckEndpoint: '/health',
    landingPage: false,
    // Server-to-server clients and same-origin GraphiQL need no CORS; opening it is a deployment decision.
    cors: false,
    // Nothing here takes file uploads; multipart parsing would only be more to attack.
    multipart: false,
    renderGraphiQL,
    graphiql: {
      title: 'Petstore GraphQL',
      defaultQuery: EXAMPLE_OPERATION,
      headers: JSON.stringify({ Authorization: 'Bearer <API_KEY>' }, null, 2),
      // Off: persisting would keep the bearer key in the browser's localStorage.
      shouldPersistHeaders: false,
    },
    // isDev false: stack traces never reach clients, whatever NODE_ENV says.
    maskedErrors: { maskError: createMaskError(deps.logger), isDev: false },
    logging: yogaLogger(deps.logger),
    plugins: [
      useApiKeyAuth({ verifyApiKey, graphqlEndpoint: GRAPHQL_ENDPOINT }),
      useReadinessCheck({ path: '/ready', check: deps.checkDatabase }),
      ...useQueryLimits(),
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
