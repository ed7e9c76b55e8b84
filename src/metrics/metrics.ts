import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { sendError } from '../http/send-json.ts';
import type { StreamEnd, StreamRefusal } from '../http/stream-outcomes.ts';
import type { UpgradeRefusalReason } from '../subscriptions/websocket-close.ts';
import type { DeliveryOutcome, EndpointState } from '../webhooks/webhook-store.ts';
import { createOperationLabels } from './operation-labels.ts';

/** Upper bounds of http_request_duration_seconds, in seconds (prom-client adds +Inf). */
export const REQUEST_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function makers(registry: Registry) {
  const registers = [registry];
  return {
    counter: <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers }),
    gauge: <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Gauge<L>({ name, help, labelNames, registers }),
    registers,
  };
}

/** What requests did: their durations, GraphQL operations, refusals. */
function requestMetrics(registry: Registry) {
  const { counter, registers } = makers(registry);
  return {
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: "Time from a request arriving to its response being sent, by route template, method and status. Subscription streams are not in it: their length is the client's choice (graphql_subscriptions_* and the access log).",
      labelNames: ['route', 'method', 'status'] as const,
      buckets: REQUEST_DURATION_BUCKETS,
      registers,
    }),
    graphqlOperations: counter(
      'graphql_operations_total',
      'GraphQL operations on /graphql by operation name, type, outcome (error: any error in the result) and the published document id they ran by (empty: the document was sent whole).',
      ['operation', 'type', 'outcome', 'document'],
    ),
    untrustedOperations: counter(
      'graphql_untrusted_operations_total',
      'GraphQL operations sent whole by keys limited to published documents: TRUSTED_DOCUMENTS=log runs them, enforce would refuse them. By operation name and type.',
      ['operation', 'type'],
    ),
    documentsRefused: counter(
      'graphql_documents_refused_total',
      'GraphQL requests refused before parsing under trusted documents, by reason: id_required (a document sent whole by a key limited to published ones), not_in_list (an id nobody published), document_and_id (both sent).',
      ['reason'],
    ),
    fastPathRequests: counter(
      'graphql_fast_path_requests_total',
      'GraphQL requests answered without Yoga: ordinary POSTs and GETs of documents Yoga had already found valid, run by the direct execution. The rest of graphql_operations_total went through Yoga.',
    ),
    mcpToolCalls: counter(
      'mcp_tool_calls_total',
      'MCP tool calls on /mcp by tool and outcome: ok, invalid_arguments (refused by the tool\'s input schema), refused (the request itself refused by the SDK), unknown_tool (tool "unknown"), or the lower-cased error code its REST twin would have answered (bad_user_input, forbidden, idempotency_key_reused...).',
      ['tool', 'outcome'],
    ),
    deprecatedUses: counter(
      'deprecated_operation_requests_total',
      'Requests to deprecated REST operations, by operation and API key id: who still has to migrate.',
      ['operation', 'key_id'],
    ),
    rateLimited: counter(
      'rate_limited_requests_total',
      'Requests refused with 429, by limit: per API key, or per address for failed authentication.',
      ['limit'],
    ),
    authFailures: counter(
      'authentication_failures_total',
      'Requests refused with 401, by reason: no key sent, or a key that is unknown, revoked or expired.',
      ['reason'],
    ),
  };
}

/** GraphQL subscription streams (SSE): open, events, refusals and ends. */
function streamMetrics(registry: Registry) {
  const { counter, gauge } = makers(registry);
  return {
    streamsOpen: gauge(
      'graphql_subscriptions_open',
      'GraphQL subscription streams open on this instance right now (MAX_SUBSCRIPTIONS bounds them).',
    ),
    streamEvents: counter(
      'graphql_subscription_events_total',
      'Events handed to subscription streams: one per pet per subscriber.',
    ),
    streamsRefused: counter(
      'graphql_subscriptions_refused_total',
      'Subscriptions refused before any event, by reason: per_key (MAX_SUBSCRIPTIONS_PER_KEY), instance (MAX_SUBSCRIPTIONS), shutdown (the instance is stopping).',
      ['reason'],
    ),
    streamsEnded: counter(
      'graphql_subscriptions_ended_total',
      'Subscription streams that ended, by reason: client (it left, or its request could take no stream), shutdown (the instance ended it: the client resumes elsewhere with its cursor), error (the source failed), revoked or expired (its key was, at the key sync).',
      ['reason'],
    ),
    websocketUpgradesRefused: counter(
      'websocket_upgrades_refused_total',
      'GraphQL WebSocket upgrades refused before the socket opened, by reason: address_pending (MAX_PENDING_WEBSOCKETS_PER_ADDRESS) and address_rate (WEBSOCKET_UPGRADE_LIMIT, WEBSOCKET_UPGRADE_BURST) with 429; instance_pending (MAX_PENDING_WEBSOCKETS), instance_sockets (MAX_SUBSCRIPTIONS) and shutdown (the instance is stopping) with 503.',
      ['reason'],
    ),
  };
}

/** How the service's dependencies fare: the database, the rate-limit store, the connection pool. */
function dependencyMetrics(registry: Registry) {
  const { counter, gauge } = makers(registry);
  return {
    databaseErrors: counter(
      'database_errors_total',
      'Database calls that failed: the database was unreachable, did not answer in time or refused a write for lack of storage (any failed read of the API keys).',
      ['operation'],
    ),
    idempotentReplays: counter(
      'idempotent_replays_total',
      'Creates answered from an earlier request with the same Idempotency-Key instead of adding a pet.',
    ),
    rateLimitStoreShared: gauge(
      'rate_limit_store_shared',
      'Whether rate limits count in Redis right now, shared by every instance (1), or in this instance alone (0: no REDIS_URL, or Redis unreachable or too slow).',
    ),
    rateLimitStoreFallbacks: counter(
      'rate_limit_store_fallbacks_total',
      "Rate-limit checks counted in this instance's memory instead of Redis: Redis unreachable, past its deadline, or not asked again until it answers.",
    ),
    poolInUse: gauge('mongodb_pool_connections_in_use', 'Database connections checked out by an operation right now.'),
    poolOpen: gauge('mongodb_pool_connections', 'Database connections open right now, idle or in use.'),
  };
}

/** Webhook deliveries (webhooks/): attempts by outcome, endpoints by state, each active endpoint's lag. */
function webhookMetrics(registry: Registry) {
  const { counter, gauge } = makers(registry);
  const deliveries = counter(
    'webhook_deliveries_total',
    'Webhook delivery attempts by outcome: delivered (2xx), retrying (another attempt is scheduled), failed (the last attempt of the schedule: the endpoint waits for an operator), gone (410: the endpoint is disabled).',
    ['outcome'],
  );
  const endpoints = gauge(
    'webhook_endpoints',
    'Webhook endpoints by state: active, disabled (by an operator or a 410), failing (retries ran out).',
    ['state'],
  );
  const lag = gauge(
    'webhook_endpoint_lag_pets',
    'Per active webhook endpoint, the pet ids between its acknowledged position and the newest pet: how far behind its receiver is.',
    ['endpoint'],
  );
  return {
    countDelivery: (outcome: DeliveryOutcome) => deliveries.inc({ outcome }),
    setEndpoints: (state: EndpointState, count: number) => endpoints.set({ state }, count),
    /** Per active endpoint; the others' go. */
    setLags(lags: ReadonlyMap<string, number>): void {
      lag.reset();
      for (const [endpoint, pets] of lags) lag.set({ endpoint }, pets);
    },
  };
}

/** Document ids are published by operators, so fewer can come; past this many, new ones count as "other". */
const MAX_DOCUMENT_IDS = 1_000;

/** Label values from a set that clients or operators choose: the first `max` as they are, then "other". */
function boundedLabel(max: number) {
  const seen = new Set<string>();
  return (value: string): string => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return 'other';
    seen.add(value);
    return value;
  };
}

let processRegistry: Registry | undefined;

/**
 * Node's process metrics (CPU, memory, event loop lag, GC, handles), registered once per process:
 * each registration starts its own event-loop and GC observers, and every service in a process
 * (tests start many) reports the same process.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Why a GraphQL request was refused under TRUSTED_DOCUMENTS (graphql_documents_refused_total). */
export type DocumentRefusal = 'id_required' | 'not_in_list' | 'document_and_id';

export type Outcome = 'success' | 'error';

/**
 * The service's Prometheus metrics (prom-client). Labels are route templates, operation names and
 * key ids: never raw paths or keys, so their number stays bounded whatever clients send.
 */
export function createMetrics() {
  const registry = new Registry();
  // In the order a scrape lists them.
  const { httpDuration, graphqlOperations, deprecatedUses, rateLimited, authFailures, databaseErrors, ...rest } = {
    ...requestMetrics(registry),
    ...streamMetrics(registry),
    ...dependencyMetrics(registry),
  };
  // Before the scrape's merged registry is made: it copies the metrics registered by then.
  const webhooks = webhookMetrics(registry);
  // Operation names are chosen by clients, but those of published documents always get their label.
  const operationLabels = createOperationLabels();
  const documentLabel = boundedLabel(MAX_DOCUMENT_IDS);

  return {
    /** The text a Prometheus scrape gets: this service's metrics and the process's. */
    scrape: (() => {
      const merged = Registry.merge([registry, processMetrics()]);
      return { contentType: merged.contentType, text: () => merged.metrics() };
    })(),

    observeRequest(route: string, method: string, status: number, seconds: number): void {
      httpDuration.observe({ route, method, status: String(status) }, seconds);
    },

    /** `documentId`: the published document the operation ran by, '' for one sent whole. */
    countGraphQLOperation(name: string | undefined, type: string, outcome: Outcome, documentId = ''): void {
      const document = documentId === '' ? '' : documentLabel(documentId);
      graphqlOperations.inc({ operation: operationLabels.label(name ?? 'anonymous'), type, outcome, document });
    },
    countFastPathRequest: () => rest.fastPathRequests.inc(),
    countUntrustedOperation(name: string | undefined, type: string): void {
      rest.untrustedOperations.inc({ operation: operationLabels.label(name ?? 'anonymous'), type });
    },
    /** The published documents' operation names, as last read: each always gets its own label. */
    publishOperationNames: operationLabels.publish,
    countDocumentRefused: (reason: DocumentRefusal) => rest.documentsRefused.inc({ reason }),

    setOpenStreams: (count: number) => rest.streamsOpen.set(count),
    countStreamEvent: () => rest.streamEvents.inc(),
    countStreamRefused: (reason: StreamRefusal) => rest.streamsRefused.inc({ reason }),
    countStreamEnded: (reason: StreamEnd) => rest.streamsEnded.inc({ reason }),
    countUpgradeRefused: (reason: UpgradeRefusalReason) => rest.websocketUpgradesRefused.inc({ reason }),

    countMcpToolCall: (tool: string, outcome: string) => rest.mcpToolCalls.inc({ tool, outcome }),
    countDeprecatedUse: (operation: string, keyId: string) => deprecatedUses.inc({ operation, key_id: keyId }),
    countRateLimited: (limit: 'per_key' | 'auth_failures') => rateLimited.inc({ limit }),
    countAuthFailure: (reason: 'missing' | 'invalid') => authFailures.inc({ reason }),
    countDatabaseError: (operation: string) => databaseErrors.inc({ operation }),
    countIdempotentReplay: () => rest.idempotentReplays.inc(),
    /** 1 while the rate limits count in Redis for the whole fleet, 0 while this instance counts alone. */
    setRateLimitStoreShared: (shared: boolean) => rest.rateLimitStoreShared.set(shared ? 1 : 0),
    countRateLimitStoreFallback: () => rest.rateLimitStoreFallbacks.inc(),
    webhooks,
    /** Shows the driver's connection pool (its CMAP events) in the pool gauges. */
    setPoolConnections(open: number, inUse: number): void {
      rest.poolOpen.set(open);
      rest.poolInUse.set(inUse);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** GET /metrics: the Prometheus text, never cached (every scrape must see the counters now). */
export function createMetricsHandler(metrics: Metrics, logger: Logger): Handler {
  return (_req, res) =>
    void metrics.scrape.text().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.scrape.contentType, 'Cache-Control': 'no-store' });
        res.end(text);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'collecting the metrics failed');
        sendError(res, 'rest', { status: 500, code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.' });
      },
    );
}

/** The private metrics port (METRICS_PORT): GET or HEAD /metrics without a key, 404 for anything else. */
export function createMetricsListener(sendMetrics: Handler): Handler {
  return (req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const path = req.url?.split('?')[0];
    if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) return sendMetrics(req, res);
    sendError(res, 'rest', { status: 404, code: 'ROUTE_NOT_FOUND', message: `No route ${req.method} ${path}` });
  };
}
