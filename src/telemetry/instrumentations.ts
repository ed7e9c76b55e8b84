import type { IncomingMessage } from 'node:http';
import type { Attributes } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import type { ClientAddress } from '../edge/client-address.ts';

/** The probes a balancer calls every few seconds and Prometheus's scrape: traced, they would bury the rest. */
export const UNTRACED_PATHS: ReadonlySet<string> = new Set(['/health', '/ready', '/metrics']);

/**
 * graphql-http/yoga.ts's GRAPHQL_ENDPOINT, not imported from there: that would load the schema and its libraries
 * before the instrumentations are registered. A test of the real process holds the two together.
 */
const GRAPHQL_PATH = '/graphql';

const pathOf = (req: IncomingMessage) => (req.url ?? '/').split('?', 1)[0] ?? '/';

/**
 * The server span's own attributes: the client address by TRUST_PROXY (the instrumentation believes any
 * X-Forwarded-For), and on /graphql no url.query, which holds a GET's document and variables.
 */
export function incomingSpanAttributes(clientAddress: ClientAddress) {
  return (req: IncomingMessage): Attributes => ({
    'client.address': clientAddress(req),
    ...(pathOf(req) === GRAPHQL_PATH ? { 'url.query': undefined } : {}),
  });
}

/**
 * One server span per request (the edge names it after its route), and a span per MongoDB command
 * under whatever span is active. Outgoing HTTP is not ours to trace (the only client is the exporter).
 */
export function createInstrumentations(clientAddress: ClientAddress): Instrumentation[] {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has(pathOf(req)),
      startIncomingSpanHook: incomingSpanAttributes(clientAddress),
      disableOutgoingRequestInstrumentation: true,
    }),
    new MongoDBInstrumentation({
      // The defaults, said out loud: db.query.text keeps a command's shape with every value as "?"
      // (never a key digest, a pet or a filter value), and commands outside a request (key sync,
      // purge, the driver's own monitoring) make no span of their own.
      enhancedDatabaseReporting: false,
      requireParentSpan: true,
    }),
  ];
}
