// The compiled service at a rolling restart: started with a shutdown delay long enough for a create and
// its events, sent SIGTERM, and held to the checks every shutdown test makes of how it ends.
import { expect } from 'vitest';
import { startServiceOnRunDatabase } from './service-on-run-database.ts';
import type { ServiceProcess } from './service-process.ts';
import { uniqueDbName } from './test-server.ts';

/** SHUTDOWN_DELAY_MS: long enough for a create over REST and its events to finish on a loaded machine. */
export const DELAY_MS = 3_000;
/** SHUTDOWN_TIMEOUT_MS. */
export const TIMEOUT_MS = 10_000;
/** How soon after the delay's end a stream or socket must be ended. */
const ENDED_WITHIN_MS = 1_000;

/** The compiled service keyed with API_KEY, on a database of its own, with the delay and timeout above. */
export function startRestartingService(dbPrefix: string): Promise<ServiceProcess> {
  return startServiceOnRunDatabase({
    dbName: uniqueDbName(dbPrefix),
    env: { SHUTDOWN_DELAY_MS: String(DELAY_MS), SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS) },
    echo: 'stderr',
  });
}

export interface Signalled {
  /** The exit code, once the process has exited. */
  exited: Promise<number | null>;
  /** Milliseconds since SIGTERM was sent. */
  sinceSignal(): number;
}

/** Sends SIGTERM, watching for the exit from before the signal so that it cannot be missed. */
export function sigterm(service: ServiceProcess): Signalled {
  const exited = new Promise<number | null>((done) => service.child.once('exit', (code) => done(code)));
  const signalAt = performance.now();
  service.child.kill('SIGTERM');
  return { exited, sinceSignal: () => performance.now() - signalAt };
}

/** Now is after the delay's end and within ENDED_WITHIN_MS of it. */
export function expectAtDelayEnd(signalled: Signalled): void {
  const elapsed = signalled.sinceSignal();
  expect(elapsed).toBeGreaterThanOrEqual(DELAY_MS);
  expect(elapsed).toBeLessThan(DELAY_MS + ENDED_WITHIN_MS);
}

/** The process exits 0 well before SHUTDOWN_TIMEOUT_MS, without the drain's deadline cutting anything. */
export async function expectCleanExit(service: ServiceProcess, signalled: Signalled): Promise<void> {
  expect(await signalled.exited).toBe(0);
  expect(signalled.sinceSignal()).toBeLessThan(DELAY_MS + TIMEOUT_MS / 2);
  expect(service.log.join('\n')).not.toMatch(/drain deadline passed/);
}
