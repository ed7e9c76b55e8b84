import { setTimeout as sleep } from 'node:timers/promises';

/** Past this, a signal ends the process anyway: the user asked it to stop. */
const SIGNAL_CLEANUP_MS = 10_000;

/**
 * What a command opened, closed in reverse order exactly once: at its end, or on SIGINT/SIGTERM,
 * whichever comes first. Closing never throws; a failure is reported and the next step still runs.
 */
export function createCleanup(report: (message: string) => void) {
  const steps: { what: string; close: () => Promise<void> }[] = [];
  let running: Promise<void> | undefined;

  async function closeAll(): Promise<void> {
    for (const step of steps.reverse()) {
      await step.close().catch((error: unknown) => report(`closing ${step.what} failed: ${(error as Error).message}`));
    }
  }
  const run = (): Promise<void> => {
    running ??= closeAll();
    return running;
  };

  return {
    add(what: string, close: () => Promise<void>): void {
      steps.push({ what, close });
    },
    run,
    /** Ctrl-C or a supervisor's SIGTERM: close what is open (no embedded database outlives us), then exit. */
    onSignals(): void {
      const stop = (signal: NodeJS.Signals, code: number) => {
        report(`${signal}: stopping`);
        // A second signal while cleaning up means "now".
        process.once(signal, () => process.exit(code));
        void Promise.race([run(), sleep(SIGNAL_CLEANUP_MS)]).then(() => process.exit(code));
      };
      process.once('SIGINT', () => stop('SIGINT', 130));
      process.once('SIGTERM', () => stop('SIGTERM', 143));
    },
  };
}

export type Cleanup = ReturnType<typeof createCleanup>;
