import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { createApiKeyVerifier } from './auth/api-keys.ts';
import {
  DEFAULT_AUTH_FAILURE_BURST,
  DEFAULT_AUTH_FAILURE_LIMIT,
  DEFAULT_MAX_GRAPHQL_BODY_BYTES,
  DEFAULT_MAX_GRAPHQL_LIST_ITEMS,
  DEFAULT_RATE_LIMIT_BURST,
  DEFAULT_RATE_LIMIT_PER_KEY,
} from './config.ts';
import { createContextFactory } from './context.ts';
import { createEdge } from './edge/edge.ts';
import type { LimiterStore } from './edge/limiter-store.ts';
import { createRateLimits, type RateLimitSettings } from './edge/rate-limits.ts';
import { schema } from './graphql/schema/index.ts';
import type { PetRepository } from './pets/pet-repository.ts';
import { createRestExecutor } from './rest/executor.ts';
import { createOpenApiDocumentHandler, loadOpenApiDocument } from './rest/openapi-document.ts';
import { createPublicPages } from './static/public-pages.ts';
import { createGraphQLServer, GRAPHQL_ENDPOINT } from './yoga.ts';

export interface ServiceOptions {
  pets: PetRepository;
  apiKeys: readonly string[];
  logger: Logger;
  restBasePath: string;
  /** Largest REST request body. */
  maxBodyBytes: number;
  /** Largest GraphQL request body. */
  maxGraphQLBodyBytes?: number;
  /** Most pets one GraphQL operation may ask for, summed over its list fields. */
  maxGraphQLListItems?: number;
  /** Per API key and per client address for failed authentication; a rate of 0 turns one off. */
  rateLimits?: RateLimitSettings;
  /** Where the rate limit counters live (this process's memory by default). */
  rateLimitStore?: LimiterStore;
  /** Resolves when the database answers; backs `GET /ready`. */
  checkDatabase: () => Promise<void>;
  /** Pre-filled in GraphiQL's Headers tab: only for a generated development key on loopback. */
  graphiqlApiKey?: string;
}

export interface Service {
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** From now on /ready says 503 and every response closes its connection. */
  drain(): void;
  close(): Promise<void>;
}

const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  perKey: { rate: DEFAULT_RATE_LIMIT_PER_KEY, burst: DEFAULT_RATE_LIMIT_BURST },
  authFailures: { rate: DEFAULT_AUTH_FAILURE_LIMIT, burst: DEFAULT_AUTH_FAILURE_BURST },
};

/** The composition root: builds the whole HTTP service once; main, the tests and the benchmark call it. */
export function createService(options: ServiceOptions): Service {
  const { logger, restBasePath } = options;
  const maxGraphQLBodyBytes = options.maxGraphQLBodyBytes ?? DEFAULT_MAX_GRAPHQL_BODY_BYTES;
  const createContext = createContextFactory(options.pets);
  const yoga = createGraphQLServer({
    createContext,
    logger,
    maxListItems: options.maxGraphQLListItems ?? DEFAULT_MAX_GRAPHQL_LIST_ITEMS,
  });
  const rest = createRestExecutor({
    schema,
    envelop: yoga,
    basePath: restBasePath,
    maxBodyBytes: options.maxBodyBytes,
    logger,
  });
  const pages = createPublicPages({
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    restBasePath,
    graphiqlApiKey: options.graphiqlApiKey,
    openApiDocument: createOpenApiDocumentHandler(loadOpenApiDocument(), restBasePath),
  });
  const edge = createEdge({
    logger,
    verifyApiKey: createApiKeyVerifier(options.apiKeys),
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    graphql: (req, res, identity) => yoga.handle(req, res, identity),
    rest,
    restBasePath,
    pages,
    checkDatabase: options.checkDatabase,
    maxGraphQLBodyBytes,
    rateLimits: createRateLimits({
      ...(options.rateLimits ?? DEFAULT_RATE_LIMITS),
      logger,
      ...(options.rateLimitStore ? { store: options.rateLimitStore } : {}),
    }),
  });
  return {
    listener: edge.listener,
    drain: edge.drain,
    close: async () => {
      edge.drain();
      await yoga.dispose();
    },
  };
}
