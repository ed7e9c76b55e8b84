import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { createKeyRing, syncIssuedKeys } from './auth/api-keys.ts';
import type { Config } from './config.ts';
import { createContextFactory, type FollowPets } from './context.ts';
import { createPublishedDocuments } from './documents/published-documents.ts';
import { createAccessLog } from './edge/access-log.ts';
import {
  type AuthenticationOptions,
  createAuthentication,
  createKeyCheck,
  createRequestCharges,
} from './edge/authenticate.ts';
import { clientAddressOf } from './edge/client-address.ts';
import { type CorsPolicy, createCorsPolicy } from './edge/cors.ts';
import { createDrain } from './edge/drain.ts';
import { createReadiness } from './edge/health.ts';
import type { LimiterStore } from './edge/limiter-store.ts';
import { createEdgeListener } from './edge/listener.ts';
import { createServiceRateLimits } from './edge/rate-limits.ts';
import { createRoutes } from './edge/routes.ts';
import { createDirectExecution } from './graphql/direct-execution.ts';
import { createErrorLog } from './graphql/error-log.ts';
import { directStepsOf, executionRules } from './graphql/execution-rules.ts';
import { createListSizeCheck } from './graphql/list-size.ts';
import { createOperationAdmission, type OperationAdmission } from './graphql/operation-admission.ts';
import { schema } from './graphql/schema/index.ts';
import { createValidatedDocuments } from './graphql/validated-documents.ts';
import { useConditionalGets } from './graphql-http/conditional-gets.ts';
import { createGraphQLFastPath } from './graphql-http/fast-path.ts';
import { createGraphQLRequests } from './graphql-http/request.ts';
import { createGraphQLServer, GRAPHQL_ENDPOINT } from './graphql-http/yoga.ts';
import type { GiveBack } from './http/conditional-get.ts';
import type { KeyGone } from './http/stream-outcomes.ts';
import { createIdempotentCreates, schedulePurge } from './idempotency/idempotent-create.ts';
import { createMcpEndpoint } from './mcp/mcp-endpoint.ts';
import { createMetricsHandler, createMetricsListener, type Metrics } from './metrics/metrics.ts';
import { createPetUseCase } from './pets/create-pet.ts';
import { createRestExecutor } from './rest/executor.ts';
import { createOpenApiDocumentHandler, loadOpenApiDocument } from './rest/openapi-document.ts';
import { createPublicPages } from './static/public-pages.ts';
import type { Stores } from './stores.ts';
import { createSubscriptions } from './subscriptions/follow-pets.ts';
import { createWebSockets } from './subscriptions/websocket.ts';
import { upgradeAdmissionOf } from './subscriptions/websocket-admission.ts';
import { createExecuteSpans } from './telemetry/graphql-spans.ts';
import { createRequestTracing } from './telemetry/request-span.ts';
import { webhookDispatcherOf } from './webhooks/webhook-dispatcher.ts';

export interface ServiceDependencies {
  config: Config;
  stores: Stores;
  logger: Logger;
  metrics: Metrics;
  /** Pre-filled in GraphiQL and authorized on the REST reference page: only a generated development key on loopback. */
  developmentKey?: string;
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
  /** node:http's `upgrade` event: GraphQL over WebSocket on /graphql (http/server.ts acceptUpgrades). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /**
   * Ends every stream (SSE and WebSocket `complete`: clients resume elsewhere with their cursor), closes
   * each WebSocket with 1001, cuts the connection of a stream not ended a moment later (a client not
   * reading) and refuses new streams, so none holds the drain; settles when no WebSocket is left.
   */
  endStreams(): Promise<void>;
  /** Ends the streams, then closes everything the service opened. */
  close(): Promise<void>;
}

/**
 * GraphQL (Yoga, and the fast path for documents Yoga has validated) and REST over one execution:
 * one context (with idempotent creates) and the rules of execution-rules.ts, each declared once.
 */
function createExecution(
  { config, stores, logger, metrics, tracer }: ServiceDependencies,
  { admission, followPets, giveBack }: { admission: OperationAdmission; followPets: FollowPets; giveBack: GiveBack },
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
    onOperationNames: metrics.publishOperationNames,
  });
  const createContext = createContextFactory(stores.pets, createPetUseCase(stores.pets, idempotentCreates), followPets);
  const errorLog = createErrorLog(logger);
  // While tracing, every GraphQL request goes through Yoga: its parse and validate spans are part of the trace.
  const validatedDocuments = tracer ? undefined : createValidatedDocuments();
  const rules = executionRules({
    ...{ schema, logger, errorLog, admission, metrics, tracer, validatedDocuments },
    listSizeCheck: createListSizeCheck(config.MAX_GRAPHQL_LIST_ITEMS),
    trustedDocuments: { mode: config.TRUSTED_DOCUMENTS, documents },
    conditionalGets: useConditionalGets(giveBack),
  });
  // Yoga's plugins; over WebSocket also their params hooks (trusted documents, APQ), which getEnveloped skips.
  const plugins = rules.flatMap((rule) => rule.yoga);
  const yoga = createGraphQLServer({ createContext, logger, errorLog, plugins });
  const executeSpans = tracer ? createExecuteSpans(tracer) : undefined;
  const direct = createDirectExecution({
    schema,
    createContext,
    steps: directStepsOf(rules),
    ...(executeSpans ? { executeSpans } : {}),
  });
  const fastPath =
    validatedDocuments &&
    createGraphQLFastPath({
      ...{ execution: direct, documents: validatedDocuments, metrics, giveBack },
      trustedDocuments: config.TRUSTED_DOCUMENTS,
      publishedText: (id) => {
        // A text not read yet (a promise) or an id not published (null): Yoga answers it.
        const text = documents.lookup(id);
        return typeof text === 'string' ? text : undefined;
      },
    });
  return {
    rest: createRestExecutor({
      ...{ execution: direct, logger, metrics, giveBack },
      basePath: config.REST_BASE_PATH,
      maxBodyBytes: config.MAX_BODY_BYTES,
    }),
    graphql: createGraphQLRequests(
      (req, res, context) => yoga.handle(req, res, context),
      config.MAX_GRAPHQL_BODY_BYTES,
      fastPath,
    ),
    /** Yoga's envelop and plugins, for operations over WebSocket. */
    envelop: { getEnveloped: yoga.getEnveloped, plugins },
    /** Settles once the published ids were read for the first time. */
    ready: documents.firstRead,
    close: async () => {
      stopPurging();
      documents.stop();
      await yoga.dispose();
    },
  };
}

/** GraphQL over WebSocket: the edge's key check and limits; each operation runs through Yoga. */
function createGraphQLWebSockets(
  { config, logger, metrics }: ServiceDependencies,
  parts: {
    execution: { envelop: Pick<Parameters<typeof createWebSockets>[0], 'getEnveloped' | 'plugins'> };
    keyCheck: AuthenticationOptions;
    cors: CorsPolicy | undefined;
    store: LimiterStore;
  },
) {
  const accessLog = createAccessLog(logger);
  return createWebSockets({
    ...parts.execution.envelop,
    checkKey: createKeyCheck(parts.keyCheck),
    logger,
    accessLog,
    maxPayloadBytes: config.MAX_GRAPHQL_BODY_BYTES,
    pingMs: config.WEBSOCKET_PING_MS,
    limits: { maxPerKey: config.MAX_SUBSCRIPTIONS_PER_KEY, maxTotal: config.MAX_SUBSCRIPTIONS },
    admission: upgradeAdmissionOf(config, {
      store: parts.store,
      // The failed-authentication limit's client address: TRUST_PROXY's rule.
      clientAddress: parts.keyCheck.clientAddress,
      cors: parts.cors,
      ...{ logger, accessLog },
      countRefused: metrics.countUpgradeRefused,
    }),
  });
}

/** The route table: the public pages, readiness, GraphQL, REST, MCP and, without METRICS_PORT, /metrics. */
function createServiceRoutes(
  { config, stores, developmentKey, logger, metrics }: ServiceDependencies,
  parts: {
    execution: Pick<ReturnType<typeof createExecution>, 'graphql' | 'rest'>;
    drain: ReturnType<typeof createDrain>;
    sendMetrics: ReturnType<typeof createMetricsHandler>;
  },
) {
  const restBasePath = config.REST_BASE_PATH;
  return createRoutes({
    restBasePath,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    pages: createPublicPages({
      graphqlEndpoint: GRAPHQL_ENDPOINT,
      restBasePath,
      developmentKey,
      openApiDocument: createOpenApiDocumentHandler(loadOpenApiDocument(), restBasePath),
    }),
    readiness: createReadiness(stores.ping, parts.drain.isDraining),
    graphql: parts.execution.graphql,
    rest: parts.execution.rest,
    mcp: createMcpEndpoint({ config, rest: parts.execution.rest, logger, metrics }),
    ...(config.METRICS_PORT === undefined ? { metrics: ({ req, res }) => parts.sendMetrics(req, res) } : {}),
  });
}

/** A revoked or expired key's open streams end, SSE and WebSocket alike. */
function endKeys(keyIds: string[], why: KeyGone, ...streams: { endKey(keyId: string, why: KeyGone): void }[]): void {
  for (const keyId of keyIds) for (const each of streams) each.endKey(keyId, why);
}

/** The composition root: builds the whole HTTP service once; main, the tests and the benchmark call it. */
export function createService(dependencies: ServiceDependencies): Service {
  const { config, stores, logger, metrics, tracer } = dependencies;
  const limits = createServiceRateLimits(dependencies);
  const { rateLimits, store } = limits;
  const keyRing = createKeyRing(config.API_KEYS);
  const subscriptions = createSubscriptions({
    ...{ config, pets: stores.pets, logger, metrics },
    keyStanding: keyRing.standing,
    payStream: rateLimits.streamPoints,
  });
  // Every face creates through the announcing repository, so each stored pet reaches the subscribers.
  const execution = createExecution(
    { ...dependencies, stores: { ...stores, pets: subscriptions.pets } },
    {
      // A GraphQL request pays one point per root field it runs: the edge takes the first, admission the rest.
      admission: createOperationAdmission({ charge: createRequestCharges(rateLimits, metrics) }),
      followPets: subscriptions.followPets,
      giveBack: rateLimits.revalidated,
    },
  );
  // The ring's issued keys come with the first read, asynchronously: none is gone before websockets exist.
  const keySync = syncIssuedKeys({
    ring: keyRing,
    store: stores.issuedKeys,
    logger,
    onDatabaseError: metrics.countDatabaseError,
    onKeysGone: (ids, why) => endKeys(ids, why, subscriptions, websockets),
  });
  const keyCheck: AuthenticationOptions = {
    verifyApiKey: keyRing.verify,
    rateLimits,
    metrics,
    clientAddress: clientAddressOf(config.TRUST_PROXY),
  };
  const sendMetrics = createMetricsHandler(metrics, logger);
  const drain = createDrain();
  const { routes, fallback } = createServiceRoutes(dependencies, { execution, drain, sendMetrics });
  const webhooks =
    stores.webhooks &&
    webhookDispatcherOf(config, {
      ...{ store: stores.webhooks, follow: subscriptions.followFeed, logger, metrics: metrics.webhooks },
      highestPetId: () => stores.pets.highestId(),
      keyMayRead: (keyId) => keyRing.permits(keyId, 'pets:read'),
      startAfter: keySync.firstRead,
    });
  const cors = createCorsPolicy(config.CORS_ORIGINS);
  const websockets = createGraphQLWebSockets(dependencies, { execution, keyCheck, cors, store });
  const endStreams = () => {
    subscriptions.endStreams();
    return websockets.close();
  };
  return {
    listener: createEdgeListener({
      ...{ routes, fallback, drain, logger, metrics, cors },
      authenticate: createAuthentication(keyCheck),
      ...(tracer ? { tracing: createRequestTracing() } : {}),
    }),
    metricsListener: createMetricsListener(sendMetrics),
    ready: Promise.all([keySync.firstRead, execution.ready]).then(() => undefined),
    hasUsableKey: keyRing.hasUsableKey,
    // A draining instance delivers no more: another instance takes its endpoints (with REDIS_URL).
    drain: () => {
      drain.start();
      void webhooks?.close();
    },
    upgrade: websockets.upgrade,
    endStreams,
    close: async () => {
      drain.start();
      await webhooks?.close();
      await endStreams();
      await subscriptions.close();
      await keySync.stop();
      await execution.close();
      await limits.close();
    },
  };
}
