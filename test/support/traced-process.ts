// Tracing on in this test process, as `node --import=./dist/telemetry/register.js` turns it on in the
// service's: the same startTracing (provider, AsyncLocalStorage context, W3C propagation, the HTTP
// and MongoDB instrumentations), its spans kept in memory one by one instead of batched to a Collector.
//
// Import it first, as a bare import (Biome keeps side-effect imports in place): the MongoDB
// instrumentation patches the driver's modules as they load (require-in-the-middle), so the driver
// must not be loaded yet. Vitest's forks pool runs each test file in a fresh process, so it is not.
import { createRequire } from 'node:module';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTracing } from '../../src/telemetry/tracing.ts';

const loaded = Object.keys(createRequire(import.meta.url).cache);
if (loaded.some((file) => file.includes('/node_modules/mongodb/'))) {
  throw new Error('the MongoDB driver was loaded before tracing started: import support/traced-process.ts first');
}

/** Every span ended in this process so far. */
export const finishedSpans = new InMemorySpanExporter();
export const testTracing = startTracing({ spanProcessors: [new SimpleSpanProcessor(finishedSpans)] });
