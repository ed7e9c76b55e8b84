import pLimit from 'p-limit';
import { DatabaseUnavailableError } from '../errors.ts';
import { translated } from './driver-errors.ts';

/** Every database call gives up after this, queues and retries included: its 503 must go out within 6 s. */
export const DATABASE_DEADLINE_MS = 4_500;

/**
 * Runs `work` with a signal that aborts after `ms` with a DatabaseUnavailableError, and rejects with
 * that error by then even if `work` ignores the signal. One controller and one timer: the hot path.
 */
export function withDeadline<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const late = new DatabaseUnavailableError({ cause: new Error(`no answer within ${ms} ms`) });
      controller.abort(late);
      reject(late);
    }, ms);
    const settle =
      <A>(done: (value: A) => void) =>
      (value: A) => {
        clearTimeout(timer);
        done(value);
      };
    try {
      work(controller.signal).then(settle(resolve), settle(reject));
    } catch (error) {
      settle(reject)(error);
    }
  });
}

/**
 * How a store makes each call: bounded by `deadlineMs`, driver errors translated to domain errors,
 * and every outage told to `onDatabaseUnavailable` under the call's name (a metric).
 */
export function createDatabaseCalls(deadlineMs: number, onDatabaseUnavailable?: (operation: string) => void) {
  return <T>(operation: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> =>
    withDeadline(deadlineMs, (signal) => translated(work(signal))).catch((error: unknown) => {
      if (error instanceof DatabaseUnavailableError && error.outage) onDatabaseUnavailable?.(operation);
      throw error;
    });
}

/** The driver honours `signal` on every operation; its types list it on reads only. */
export function withSignal<T extends object>(options: T, signal: AbortSignal): T {
  return { ...options, signal };
}

export type SerialQueue = <T>(signal: AbortSignal, task: () => Promise<T>) => Promise<T>;

/**
 * Runs tasks one at a time. A task whose signal aborts while it waits is refused with the signal's
 * reason at that moment and never runs; once running, the task bounds itself with the same signal.
 */
export function createSerialQueue(): SerialQueue {
  const limit = pLimit(1);
  return <T>(signal: AbortSignal, task: () => Promise<T>) => {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const giveUp = () => reject(signal.reason);
      signal.addEventListener('abort', giveUp, { once: true });
      void limit(async () => {
        signal.removeEventListener('abort', giveUp);
        if (signal.aborted) return;
        try {
          resolve(await task());
        } catch (error) {
          reject(error);
        }
      });
    });
  };
}
