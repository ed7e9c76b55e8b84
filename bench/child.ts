// The parent's handle on bench/servers.ts (or a tracing process, bench/tracing-servers.ts): fork it,
// wait for it, ask it things, stop it. Every wait has a deadline, and a child that will not stop is
// killed, so no process outlives the run.

import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startFlags } from '../test/support/start-flags.ts';
import type { ChildMessage, Ready, Request, ServersConfig, TracingServersConfig } from './protocol.ts';

/** Generous: FerretDB starts in about a second, but a first run may have to build it. */
const READY_TIMEOUT_MS = 240_000;
const STOP_TIMEOUT_MS = 15_000;

/** tsx for bench/'s own TypeScript, then the service itself from dist/ (bench/built-service.ts). */
export const SERVICE_UNDER_TEST_FLAGS = [
  '--import',
  'tsx',
  '--import',
  fileURLToPath(new URL('./built-service.ts', import.meta.url)),
];

type Ask = Exclude<Request, { type: 'stop' }>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface Servers {
  ready: Ready;
  /** Sends a request and resolves with the servers' RSS once it is done; rejects after `timeoutMs`. */
  ask(request: DistributiveOmit<Ask, 'id'>, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

/** The process's environment without OpenTelemetry's variables: only a tracing process gets any, its own. */
function environment(otel: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  return { ...env, ...otel };
}

/** The main servers process (bench/servers.ts), or with `tracing` a tracing process and its OTEL_* variables. */
export async function startServers(
  config: ServersConfig | TracingServersConfig,
  tracing?: { otel: Record<string, string> },
): Promise<Servers> {
  const script = fileURLToPath(new URL(tracing ? './tracing-servers.ts' : './servers.ts', import.meta.url));
  // BENCH_CPU_PROF=DIR profiles the child.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = fork(script, [JSON.stringify(config)], {
    // startFlags() holds the telemetry entry: it starts tracing when, and only when, OTEL_* say so.
    execArgv: [...startFlags(), ...SERVICE_UNDER_TEST_FLAGS, ...profile],
    env: environment(tracing?.otel ?? {}),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const stop = () => stopChild(child);
  try {
    const ready = await waitFor<Ready>(child, READY_TIMEOUT_MS, 'the servers to start', (message) => {
      if (message.type === 'failed') throw new Error(`the servers failed to start: ${message.message}`);
      return message.type === 'ready' ? message : undefined;
    });
    let lastId = 0;
    const ask: Servers['ask'] = (request, timeoutMs = 10_000) => {
      const id = ++lastId;
      const reply = waitFor(child, timeoutMs, `the servers to answer ${request.type}`, (message) =>
        message.type === 'reply' && message.id === id ? message : undefined,
      );
      child.send({ ...request, id } as Request);
      return reply.then((message) => {
        if (message.error) throw new Error(`${request.type}: ${message.error}`);
        return message.rss;
      });
    };
    return { ready, ask, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Resolves with the first message `pick` returns; rejects on a deadline, on exit, or if `pick` throws.
 * Also for the children of `npm run profile` and `npm run bench:alternate`, whose messages are their own.
 */
export function waitFor<T, Message = ChildMessage>(
  child: ChildProcess,
  timeoutMs: number,
  what: string,
  pick: (message: Message) => T | undefined,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      outcome();
    };
    const fail = (message: string) => settle(() => reject(new Error(message)));
    const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms waiting for ${what}`), timeoutMs);
    const onExit = (code: number | null, signal: string | null) =>
      fail(`the servers exited (code ${code}, signal ${signal}) while waiting for ${what}`);
    const onMessage = (message: Message) => {
      try {
        const picked = pick(message);
        if (picked !== undefined) settle(() => resolve(picked));
      } catch (error) {
        settle(() => reject(error));
      }
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  if (child.connected) child.send({ type: 'stop' } satisfies Request);
  else child.kill('SIGTERM');
  const timer = setTimeout(() => {
    process.stderr.write('[bench] the servers did not stop in time: killing them\n');
    child.kill('SIGKILL');
  }, STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
