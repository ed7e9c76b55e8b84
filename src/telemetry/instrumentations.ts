import type { IncomingMessage } from 'node:http';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';

/** The probes a balancer calls every few seconds and Prometheus's scrape: traced, they would bury the rest. */
export const UNTRACED_PATHS: ReadonlySet<string> = new Set(['/health', '/ready', '/metrics']);

const pathOf = (req: IncomingMessage) => (req.url ?? '/').split('?', 1)[0] ?? '/';

/**
 * One server span per request (the edge names it after its route), and a span per MongoDB command
 * under whatever span is active. Outgoing HTTP is not ours to trace (the only client is the exporter).
 */
export function createInstrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has(pathOf(req)),
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
