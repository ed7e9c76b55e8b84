import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { createKeyRing } from './auth/api-keys.ts';
import { syncIssuedKeys } from './auth/issued-keys-sync.ts';
import { type Config, rateLimitsOf } from './config.ts';
import { createContextFactory } from './context.ts';
import { createPublishedDocuments } from './documents/published-documents.ts';
import { createAuthentication, createRequestCharges } from './edge/authenticate.ts';
import { clientAddressOf } from './edge/client-address.ts';
import { createDrain } from './edge/drain.ts';
import { createGraphQLFastPath } from './edge/graphql-fast-path.ts';
import { createGraphQLRequests } from './edge/graphql-request.ts';
import { createReadiness } from './edge/health.ts';
import { createEdgeListener } from './edge/listener.ts';
import { createRateLimits } from './edge/rate-limits.ts';
import { createRedisLimiterStore } from './edge/redis-limiter-store.ts';
import { createRoutes } from './edge/routes.ts';
import { createDirectExecution } from './graphql/direct-execution.ts';
import { createErrorLog } from './graphql/error-log.ts';
import { createListSizeCheck } from './graphql/list-size.ts';
import { createOperationAdmission, type OperationAdmission } from './graphql/operation-admission.ts';
import { schema } from './graphql/schema/index.ts';
import { createValidatedDocuments } from './graphql/validated-documents.ts';
import { createIdempotentCreates } from './idempotency/idempotent-create.ts';
import { schedulePurge } from './idempotency/purge-schedule.ts';
import type { Metrics } from './metrics/metrics.ts';
import { createMetricsHandler, createMetricsListener } from './metrics/metrics-endpoint.ts';
import { createPetUseCase } from './pets/create-pet.ts';
import { createRestExecutor } from './rest/executor.ts';
import { createOpenApiDocumentHandler, loadOpenApiDocument } from './rest/openapi-document.ts';
import { createPublicPages } from './static/public-pages.ts';
import type { Stores } from './stores.ts';
import { createExecuteSpans } from './telemetry/graphql-spans.ts';
import { createRequestTracing } from './telemetry/request-span.ts';
import { createGraphQLServer, GRAPHQL_ENDPOINT } from './yoga.ts';

export interface ServiceDependencies {
  config: Config;
  stores: Stores;
  logger: Logger;
  metrics: Metrics;
  /** Pre-filled in GraphiQL's Headers tab: only for a generated development key on loopback. */
  graphiqlApiKey?: string;
  /** Set while tracing (register.ts started it): server spans named by route, GraphQL spans. */
  tracer?: Tracer;
}

export interface Service {
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** GET /metrics without authentication, for a listener on a private port (METRICS_PORT). */
  metricsListener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Settles once the issued keys and the published document ids were read for the first time: listen after it. */
  ready: Promise<void>;
  /** Whether any key, configured or issued, would authenticate now (as far as the last read knows). */
  hasUsableKey(): boolean;
  /** From now on /ready says 503 and every response closes its connection. */
  drain(): void;
  close(): Promise<void>;
}

/** Execution, shared by both faces: Yoga, and the direct execution (REST) with the same context and rules. */
function createExecution(
  { config, stores, logger, metrics, tracer }: ServiceDependencies,
  admission: OperationAdmission,
) {
  const idempotentCreates = createIdempotentCreates({
    pets: stores.pets,
    records: stores.idempotencyRecords,
    retentionMs: config.IDEMPOTENCY_RETENTION_HOURS * 3_600_000,
    onReplay: metrics.countIdempotentReplay,
  });
  const stopPurging = schedulePurge(idempotentCreates, logger);
  const documents = createPublishedDocuments({
    store: stores.persistedDocuments,
    logger,
    onDatabaseError: metrics.countDatabaseError,
  });
  const createContext = createContextFactory(stores.pets, createPetUseCase(stores.pets, idempotentCreates));
  // One of each rule for both paths: Yoga's plugins and the direct execution call the same functions.
  const errorLog = createErrorLog(logger);
  const listSizeCheck = createListSizeCheck(config.MAX_GRAPHQL_LIST_ITEMS);
  // While tracing, every GraphQL request goes through Yoga: its parse and validate spans are part of the trace.
  const validatedDocuments = tracer ? undefined : createValidatedDocuments();
  const yoga = createGraphQLServer({
    createContext,
    logger,
    errorLog,
    listSizeCheck,
    admission,
    metrics,
    trustedDocuments: { mode: config.TRUSTED_DOCUMENTS, documents },
    tracer,
    ...(validatedDocuments ? { validatedDocuments } : {}),
  });
  const direct = createDirectExecution({
    schema,
    createContext,
    errorLog,
    listSizeCheck,
    admission,
    ...(tracer ? { executeSpans: createExecuteSpans(tracer) } : {}),
  });
  const basePath = config.REST_BASE_PATH;
  const rest = createRestExecutor({
    execution: direct,
    basePath,
    maxBodyBytes: config.MAX_BODY_BYTES,
    logger,
    metrics,
  });
  const fastPath =
    validatedDocuments &&
    createGraphQLFastPath({
      execution: direct,
      documents: validatedDocuments,
      metrics,
      // The trusted-documents gate lets these through untouched (trusted-documents.ts).
      mayRunWholeDocuments: (scope) => config.TRUSTED_DOCUMENTS === 'off' || scope.arbitraryDocuments,
      publishedText: (id) => {
        // A text not read yet (a promise) or an id not published (null): Yoga answers it.
        const text = documents.lookup(id);
        return typeof text === 'string' ? text : undefined;
      },
    });
  const graphql = createGraphQLRequests(
    (req, res, context) => yoga.handle(req, res, context),
    config.MAX_GRAPHQL_BODY_BYTES,
    fastPath,
  );
  return {
    rest,
    graphql,
    /** Settles once the published ids were read for the first time. */
    ready: documents.firstRead,
    close: async () => {
      stopPurging();
      documents.stop();
      await yoga.dispose();
    },
  };
}

/** The composition root: builds the whole HTTP service once; main, the tests and the benchmark call it. */
export function createService(dependencies: ServiceDependencies): Service {
  const { config, stores, logger, metrics, graphiqlApiKey, tracer } = dependencies;
  // REDIS_URL: one count for the fleet. The client connects in the background; until it is ready, and
  // whenever Redis does not answer, this instance counts alone.
  const sharedLimits = config.REDIS_URL
    ? createRedisLimiterStore({
        url: config.REDIS_URL,
        logger,
        onShared: metrics.setRateLimitStoreShared,
        onFallback: metrics.countRateLimitStoreFallback,
      })
    : undefined;
  const rateLimits = createRateLimits({
    ...rateLimitsOf(config),
    logger,
    ...(sharedLimits ? { store: sharedLimits.store } : {}),
  });
  const restBasePath = config.REST_BASE_PATH;
  // A GraphQL request pays one point per root field it runs: the edge takes the first, admission the rest.
  const admission = createOperationAdmission({ charge: createRequestCharges(rateLimits, metrics) });
  const execution = createExecution(dependencies, admission);
  const keyRing = createKeyRing(config.API_KEYS);
  const keySync = syncIssuedKeys({
    ring: keyRing,
    store: stores.issuedKeys,
    logger,
    onDatabaseError: metrics.countDatabaseError,
  });
  const sendMetrics = createMetricsHandler(metrics, logger);
  const drain = createDrain();
  const { routes, fallback } = createRoutes({
    restBasePath,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    pages: createPublicPages({
      graphqlEndpoint: GRAPHQL_ENDPOINT,
      restBasePath,
      graphiqlApiKey,
      openApiDocument: createOpenApiDocumentHandler(loadOpenApiDocument(), restBasePath),
    }),
    readiness: createReadiness(stores.ping, drain.isDraining),
    graphql: execution.graphql,
    rest: execution.rest,
    ...(config.METRICS_PORT === undefined ? { metrics: ({ req, res }) => sendMetrics(req, res) } : {}),
  });
  const authenticate = createAuthentication({
    verifyApiKey: keyRing.verify,
    rateLimits,
    metrics,
    clientAddress: clientAddressOf(config.TRUST_PROXY),
  });
  return {
    listener: createEdgeListener({
      routes,
      fallback,
      authenticate,
      drain,
      logger,
      metrics,
      ...(tracer ? { tracing: createRequestTracing() } : {}),
    }),
    metricsListener: createMetricsListener(sendMetrics),
    ready: Promise.all([keySync.firstRead, execution.ready]).then(() => undefined),
    hasUsableKey: keyRing.hasUsableKey,
    drain: drain.start,
    close: async () => {
      drain.start();
      await keySync.stop();
      await execution.close();
      await sharedLimits?.close();
    },
  };
}
