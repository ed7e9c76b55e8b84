import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Upper bounds of http_request_duration_seconds, in seconds (prom-client adds +Inf). */
export const REQUEST_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function makers(registry: Registry) {
  const registers = [registry];
  return {
    counter: <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers }),
    gauge: (name: string, help: string) => new Gauge({ name, help, registers }),
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

/** The service's own metrics, registered in `registry`, in the order a scrape lists them. */
export function defineMetrics(registry: Registry) {
  return { ...requestMetrics(registry), ...streamMetrics(registry), ...dependencyMetrics(registry) };
}
