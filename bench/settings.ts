// The knobs, from the environment; a bad value stops the run before anything starts.

import type { StoreName } from './protocol.ts';
import { OPERATIONS, type Operation } from './scenarios.ts';

export interface Settings {
  rounds: number;
  /** Seconds measured per run, and the discarded warm-up run before each. */
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  stores: StoreName[];
  /** The operations measured, in OPERATIONS order (BENCH_OPERATIONS=get: the get by id alone, for more rounds in the time). */
  operations: Operation[];
  seedPets: number;
  /** Run the FerretDB cost curve (BENCH_CURVE=0 skips it), in `rounds` rounds of runs this long. */
  curve: boolean;
  curveSeconds: number;
  /** Measure the service process's RSS after 1,000 requests (BENCH_RSS=0 skips it). */
  memory: boolean;
  /** Run the tracing processes' targets (get only; BENCH_TRACING=0 skips them). */
  tracing: boolean;
}

/**
 * Defaults keep `npm run bench` near 6 minutes on 2 cores: 2 stores x 4 operations x 5 targets x
 * 3 rounds is 120 runs, so each is short (2 s + 0.5 s warm-up); the median over rounds steadies it.
 * The cost curve adds 3 rounds x 6 runs of 2 s (3 s for the busy ones).
 */
export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const problems: string[] = [];
  const number = (name: string, fallback: number, min: number, integer = false) => {
    const raw = env[name];
    const value = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
      problems.push(`${name}=${raw}: expected ${integer ? 'an integer' : 'a number'} >= ${min}`);
    }
    return value;
  };
  const storesRaw = env.BENCH_STORES ?? 'both';
  const stores: StoreName[] | undefined = { both: ['memory', 'ferretdb'], memory: ['memory'], ferretdb: ['ferretdb'] }[
    storesRaw
  ] as StoreName[] | undefined;
  if (!stores) problems.push(`BENCH_STORES=${storesRaw}: expected memory, ferretdb or both`);
  const asked = (env.BENCH_OPERATIONS ?? '').split(',').filter((name) => name !== '');
  const unknown = asked.filter((name) => !(OPERATIONS as readonly string[]).includes(name));
  if (unknown.length > 0)
    problems.push(`BENCH_OPERATIONS=${env.BENCH_OPERATIONS}: expected some of ${OPERATIONS.join(',')}`);
  const settings: Settings = {
    rounds: number('BENCH_ROUNDS', 3, 1, true),
    durationSeconds: number('BENCH_DURATION', 2, 0.5),
    warmupSeconds: number('BENCH_WARMUP', 0.5, 0),
    connections: number('BENCH_CONNECTIONS', 10, 1, true),
    stores: stores ?? [],
    operations: OPERATIONS.filter((operation) => asked.length === 0 || asked.includes(operation)),
    // list 100 needs more than 100 pets to mean a full page.
    seedPets: number('BENCH_SEED_PETS', 200, 101, true),
    curve: env.BENCH_CURVE !== '0',
    // No warm-up there: the floor has little to warm, and the median over rounds absorbs the first.
    curveSeconds: number('BENCH_CURVE_DURATION', 2, 0.5),
    memory: env.BENCH_RSS !== '0',
    tracing: env.BENCH_TRACING !== '0',
  };
  if (problems.length > 0) throw new Error(`bad benchmark settings:\n  ${problems.join('\n  ')}`);
  return settings;
}
