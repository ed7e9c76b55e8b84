import type { Logger } from 'pino';

/**
 * Mirrors something kept in the database (issued keys, published documents) by running `refresh`
 * every `intervalMs`, one run at a time, timed from the end of the last. A failed read keeps what
 * was read before (an outage must not lock clients out) and is logged once per outage, not per read.
 */
export function startRefreshLoop(options: {
  refresh: () => Promise<void>;
  intervalMs: number;
  logger: Logger;
  /** What is read, for the log lines: "the issued API keys". */
  what: string;
  onFailure?: () => void;
}) {
  const { refresh, intervalMs, logger, what } = options;
  let failing = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void>;

  async function run(): Promise<void> {
    try {
      await refresh();
      if (failing) logger.info(`${what} can be read again`);
      failing = false;
    } catch (error) {
      // A read cut short by the stop (its client closed under it) is no outage.
      if (stopped) return;
      options.onFailure?.();
      if (!failing) logger.warn({ err: error }, `cannot read ${what}; using the ones known so far`);
      failing = true;
    }
  }

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = run().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  running = run().finally(schedule);
  const firstRead = running;
  return {
    /** Settles after the first read (failed or not): the service may listen then. */
    firstRead,
    /** No read starts after this; settles when the read under way has. */
    stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      return running;
    },
  };
}
