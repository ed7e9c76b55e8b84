// The fan-out measurement's knobs, from the environment; a bad value stops it before anything starts.

export interface FanOutSettings {
  /** Open streams per step of the ladder, ascending; the ladder stops at the first failure. */
  steps: number[];
  /** No step above this (and none above the processes' file-descriptor or port limits). */
  max: number;
  /** Creates per step, spaced, each measured across every subscriber. */
  rounds: number;
  /** Subscriber processes the streams are split across. */
  clients: number;
  /** A step holds when every round's p99 (create sent to event read) is within this. */
  boundMs: number;
}

export const DEFAULT_STEPS = [100, 1_000, 2_500, 5_000, 10_000, 15_000, 20_000, 30_000, 50_000];

export function readFanOutSettings(env: NodeJS.ProcessEnv = process.env): FanOutSettings {
  const problems: string[] = [];
  const integer = (name: string, fallback: number, min: number) => {
    const raw = env[name];
    const value = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < min) problems.push(`${name}=${raw}: expected an integer >= ${min}`);
    return value;
  };
  const stepsRaw = env.BENCH_FANOUT_STEPS;
  const steps = stepsRaw ? stepsRaw.split(',').map((step) => Number(step.trim())) : DEFAULT_STEPS;
  if (steps.some((step, i) => !Number.isInteger(step) || step < 1 || (i > 0 && step <= (steps[i - 1] ?? 0)))) {
    problems.push(`BENCH_FANOUT_STEPS=${stepsRaw}: expected ascending positive integers, comma-separated`);
  }
  const settings: FanOutSettings = {
    steps,
    // The config's own ceiling on MAX_SUBSCRIPTIONS_PER_KEY: every stream shares the bench's key.
    max: integer('BENCH_FANOUT_MAX', 100_000, 1),
    rounds: integer('BENCH_FANOUT_ROUNDS', 5, 1),
    clients: integer('BENCH_FANOUT_CLIENTS', 1, 1),
    boundMs: integer('BENCH_FANOUT_BOUND_MS', 1_000, 1),
  };
  if (settings.max > 100_000) problems.push('BENCH_FANOUT_MAX: at most 100000 (MAX_SUBSCRIPTIONS_PER_KEY)');
  if (problems.length > 0) throw new Error(`bad fan-out settings:\n  ${problems.join('\n  ')}`);
  return settings;
}
