// The tracing processes (protocol.ts, TRACING_MODES) and the sink they export to: started after the
// main servers process is ready (they read its FerretDB database), stopped with it.
import { type Servers, startServers } from './child.ts';
import { type OtlpSink, startOtlpSink } from './otlp-sink.ts';
import { type Ready, TRACING_MODES, type TracingMode } from './protocol.ts';
import type { Settings } from './settings.ts';

export interface TracingProcesses {
  servers: Map<TracingMode, Servers>;
  sink: OtlpSink;
  stop(): Promise<void>;
}

/** What each mode sets: none of it for `otel-off`, the variables an operator would set for the others. */
function otelOf(mode: TracingMode, sink: OtlpSink): Record<string, string> {
  if (mode === 'otel-off') return {};
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
  if (mode === 'otel-0')
    return { ...endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' };
  return { ...endpoint, OTEL_TRACES_SAMPLER: 'parentbased_always_on' };
}

export async function startTracingProcesses(main: Ready, settings: Settings): Promise<TracingProcesses> {
  const sink = await startOtlpSink();
  const servers = new Map<TracingMode, Servers>();
  const stop = async () => {
    await Promise.all([...servers.values()].map((running) => running.stop()));
    await sink.close();
  };
  try {
    for (const mode of TRACING_MODES) {
      const config = {
        mode,
        stores: settings.stores,
        seedPets: settings.seedPets,
        apiKey: main.apiKey,
        ...(main.database ? { mongoUri: main.database.uri } : {}),
      };
      servers.set(mode, await startServers(config, { otel: otelOf(mode, sink) }));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { servers, sink, stop };
}
