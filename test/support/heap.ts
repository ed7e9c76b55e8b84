// The test process's heap after full collections, for tests that look for memory a service keeps.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Bytes in use on the heap once everything unreachable is collected. Node hides `gc` unless started
 * with --expose-gc: exposed for the moment and hidden again, as jest's leak detector does.
 */
export async function heapUsedAfterCollection(): Promise<number> {
  const hidden = typeof (globalThis as { gc?: unknown }).gc !== 'function';
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  if (hidden) setFlagsFromString('--no-expose-gc');
  // Twice: the first may only run the finalizers whose objects a second frees.
  gc();
  await nextTurn();
  gc();
  return process.memoryUsage().heapUsed;
}
