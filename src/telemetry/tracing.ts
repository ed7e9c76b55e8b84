import { createRequire } from 'node:module';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { type ClientAddress, clientAddressOf, trustedProxyProblem } from '../edge/client-address.ts';
import { createInstrumentations } from './instrumentations.ts';
import { DEFAULT_SERVICE_NAME, type FlushOutcome, type RunningTracing, setRunningTracing } from './settings.ts';

export interface TracingOptions {
  /** Where finished spans go; by default batched (OTEL_BSP_*) to OTLP over HTTP (OTEL_EXPORTER_OTLP_*). */
  spanProcessors?: SpanProcessor[];
  /** Server spans' client.address: by default the socket's peer, as without TRUST_PROXY. */
  clientAddress?: ClientAddress;
}

/** The endpoint's origin for the log: a URL may carry credentials, its headers certainly do. */
function destinationOf(env: NodeJS.ProcessEnv): string {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return 'in-process';
  try {
    return new URL(endpoint).origin;
  } catch {
    return 'an unparsable OTLP endpoint';
  }
}

/**
 * TRUST_PROXY's client-address rule for spans, read as config.ts reads it but not through it (it loads
 * the MongoDB driver, which must load after the instrumentations). An invalid list believes no header.
 */
export function clientAddressFromEnvironment(env: NodeJS.ProcessEnv): ClientAddress {
  const entries = (env.TRUST_PROXY ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const valid = entries.every((entry) => trustedProxyProblem(entry) === undefined);
  return clientAddressOf(valid ? entries : []);
}

function stopWithin(provider: NodeTracerProvider, deadlineMs: number): Promise<FlushOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<FlushOutcome>((resolve) => {
    timer = setTimeout(resolve, deadlineMs, 'timed out');
  });
  const stopped = provider.shutdown().then(
    (): FlushOutcome => 'flushed',
    (): FlushOutcome => 'failed',
  );
  return Promise.race([stopped, deadline]).finally(() => clearTimeout(timer));
}

/**
 * A tracer provider reading the standard variables, W3C trace context and the two instrumentations,
 * without sdk-node, which loads every exporter (docs/decisions/2026-11-23-tracing-with-opentelemetry.md).
 */
export function startTracing({ spanProcessors, clientAddress }: TracingOptions = {}): RunningTracing {
  const provider = new NodeTracerProvider({
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: spanProcessors ?? [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // AsyncLocalStorage for the active span; traceparent/tracestate (and baggage) read on the way in.
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: createInstrumentations(clientAddress ?? clientAddressOf([])),
  });
  // http.Server.prototype.emit is patched when node:http is next required: now, so it does not
  // depend on which module happens to require it first, nor on the ESM loader hook.
  createRequire(import.meta.url)('node:http');
  const running: RunningTracing = {
    tracer: trace.getTracer(DEFAULT_SERVICE_NAME),
    destination: destinationOf(process.env),
    stop: (deadlineMs) => stopWithin(provider, deadlineMs),
  };
  setRunningTracing(running);
  return running;
}
