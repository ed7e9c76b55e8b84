// The one way to run the compiled service in a process of its own: the tests of `npm start`, the
// soak, the benchmark's memory reading, contract fuzzing and the production-install check use it.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { commandLineOf, descendantsOf, processTreeKiller, rssMbOf } from './process-tree.ts';
import { startFlags } from './start-flags.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** A first start on a new machine compiles FerretDB with Go (a minute or two). */
const START_DEADLINE_MS = 180_000;
const BUILD_DEADLINE_MS = 300_000;
const STOP_DEADLINE_MS = 15_000;
/** Lines kept from the service's output: enough to explain a failure, bounded for a long soak. */
const LOG_LINES = 2_000;
const QUIET_LEVELS = ['warn', 'error', 'fatal', 'silent'];

export interface ServiceOptions {
  /** Over the defaults: PORT 0, LOG_LEVEL info (at least: the listening line), MONGODB_URI empty (embedded). */
  env?: Record<string, string>;
  /** 'npm': `npm start` itself (npm, which execs node); 'node': the same check and command without npm. */
  via?: 'npm' | 'node';
  /** The built tree to run (a pruned copy, say); this repository by default. */
  root?: string;
  /** Which output also goes to our stderr as it comes; all of it is kept in `log` either way. */
  echo?: 'stderr' | 'all' | 'none';
}

export interface ServiceProcess {
  /** The process started: npm with `via: 'npm'`, else the service's node. */
  child: ChildProcess;
  origin: string;
  /** The last lines of its stdout and stderr. */
  log: string[];
  rssMb(): number;
  /** `signal` (SIGTERM by default) to `child`, SIGKILL to all it started past the deadline; the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL to `child` and every process under it, for a cleanup after a failure. */
  kill(): void;
}

/** The service ended, or was killed at the start deadline, before it said it was listening. */
export class ServiceExitedError extends Error {
  constructor(
    readonly code: number | null,
    readonly log: string[],
  ) {
    super(`the service exited (${code}) before listening:\n${log.slice(-40).join('\n')}`);
  }
}

/** Its exit code (null when killed, or when it could not be started at all). */
function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
}

/** `npm start`'s staleness check, run on its own: builds when stale, fails in a production install. */
async function ensureBuilt(root: string): Promise<void> {
  const check = spawn(process.execPath, ['scripts/build.js', '--if-stale'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: BUILD_DEADLINE_MS,
  });
  const code = await exitOf(check);
  if (code !== 0) throw new Error(`node scripts/build.js --if-stale failed (${code ?? check.signalCode})`);
}

function spawnService(options: ServiceOptions, root: string): ChildProcess {
  const env = { ...process.env, PORT: '0', LOG_LEVEL: 'info', MONGODB_URI: '', ...options.env };
  if (QUIET_LEVELS.includes(env.LOG_LEVEL)) {
    throw new Error(`LOG_LEVEL ${env.LOG_LEVEL} hides the "is listening" line by which the service is found`);
  }
  const [command, args] =
    options.via === 'npm' ? ['npm', ['start', '--silent']] : [process.execPath, [...startFlags(), 'dist/main.js']];
  return spawn(command as string, args as string[], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Keeps every line (the last LOG_LINES) and echoes what was asked for; resolves with the origin. */
function readOutput(child: ChildProcess, log: string[], echo: ServiceOptions['echo']): Promise<string | undefined> {
  const keep = (line: string, echoed: boolean) => {
    log.push(line);
    if (log.length > LOG_LINES) log.shift();
    if (echoed) process.stderr.write(`${line}\n`);
  };
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => keep(line, echo !== 'none'));
  return new Promise((resolve) => {
    const stdout = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    stdout.on('line', (line) => {
      keep(line, echo === 'all');
      const origin = listeningOrigin(line);
      if (origin) resolve(origin);
    });
    // Reading stops only at the end, so the service never blocks on a full pipe.
    stdout.on('close', () => resolve(undefined));
  });
}

/** The service's JSON log lines among the output kept in `log` (pino: `time` in ms, `msg`, fields). */
export function logEntries<Entry = { time: number; msg: string } & Record<string, unknown>>(log: string[]): Entry[] {
  return log.flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Entry];
    } catch {
      return [];
    }
  });
}

function listeningOrigin(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: string; rest?: string };
    return entry.msg === 'petstore-gateway is listening' && entry.rest ? new URL(entry.rest).origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The compiled service, started as `npm start` starts it (built first when stale), resolved once it
 * logs that it listens. Without MONGODB_URI in `env` it starts its embedded FerretDB.
 */
export async function startServiceProcess(options: ServiceOptions = {}): Promise<ServiceProcess> {
  const root = options.root ?? ROOT;
  // Built beforehand (npm start's own check then finds it current), so that the start deadline is the start's.
  await ensureBuilt(root);
  const child = spawnService(options, root);
  const exit = exitOf(child);
  const log: string[] = [];
  const { remember, kill } = processTreeKiller(child);
  const deadline = setTimeout(kill, START_DEADLINE_MS);
  const origin = await readOutput(child, log, options.echo ?? 'stderr');
  clearTimeout(deadline);
  if (!origin) throw new ServiceExitedError(await exit, log);
  remember();
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const late = setTimeout(kill, STOP_DEADLINE_MS);
    const code = await exit;
    clearTimeout(late);
    return code;
  };
  // With npm in front, the service is npm's child (npm start execs it): its memory is the one wanted.
  const servicePid = () =>
    descendantsOf(child.pid as number).find((pid) => commandLineOf(pid).includes('dist/main.js')) ?? child.pid;
  return { child, origin, log, rssMb: () => rssMbOf(servicePid() as number), stop, kill };
}
