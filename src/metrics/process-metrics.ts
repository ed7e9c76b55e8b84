import { collectDefaultMetrics, Registry } from 'prom-client';

let processRegistry: Registry | undefined;

/**
 * Node's process metrics (CPU, memory, event loop lag, GC, handles), registered once per process:
 * each registration starts its own event-loop and GC observers, and every service in a process
 * (tests start many) reports the same process.
 */
export function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}
