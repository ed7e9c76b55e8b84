// Messages between the fan-out coordinator (bench/fan-out.ts), the service process
// (bench/fan-out-server.ts) and the subscriber processes (bench/fan-out-clients.ts), and the one
// way to fork, ask and stop them: every wait has a deadline, and a child that will not stop is killed.

import { type ChildProcess, fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from './child.ts';

/**
 * A clock all processes share, in ms with sub-ms resolution: each process's timeOrigin is read from
 * the system's wall clock at its start, so an arrival in one process and a send in another compare.
 */
export const sharedNow = () => performance.timeOrigin + performance.now();

export interface ServerReady {
  type: 'ready';
  url: string;
  apiKey: string;
  pid: number;
  fds: FdUse;
}

/** The service process after a full GC (it runs with --expose-gc). */
export interface ServerMemory {
  rss: number;
  heapUsed: number;
  external: number;
  /** graphql_subscriptions_open, from the service's own metrics. */
  openStreams: number;
  fds: FdUse;
}

export interface FdUse {
  open: number;
  /** The soft limit on open files (`ulimit -n`) of that process. */
  limit: number;
}

export type ServerRequest = { type: 'memory'; id: number } | { type: 'stop' };

export interface Opened {
  opened: number;
  /** Why streams failed to open: `status 429`, `timeout`, `ECONNRESET`, ... with counts. */
  failures: Record<string, number>;
  fds: FdUse;
}

export interface Collected {
  /** sharedNow() at each stream's arrival of the armed pet; streams without one are missing. */
  arrivals: number[];
  missing: number;
  /** Streams the server ended (or that broke) since they opened. */
  ended: number;
}

export type ClientRequest =
  | { type: 'open'; id: number; url: string; apiKey: string; count: number; concurrency: number; deadlineMs: number }
  | { type: 'arm'; id: number; name: string }
  | { type: 'collect'; id: number; deadlineMs: number }
  | { type: 'close'; id: number; deadlineMs: number }
  | { type: 'fds'; id: number };

export type Reply<T> = { type: 'reply'; id: number; value?: T; error?: string };

/** Open files and their soft limit, for this process. */
export function fdUse(): FdUse {
  const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
  const limit = line === undefined || line === 'unlimited' ? Number.POSITIVE_INFINITY : Number(line);
  return { open: readdirSync('/proc/self/fd').length, limit };
}

/** How many loopback connections one client address can open to one server port. */
export function ephemeralPorts(): number {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return (high ?? 0) - (low ?? 0) + 1;
}

const STOP_TIMEOUT_MS = 10_000;

export interface Forked {
  child: ChildProcess;
  /** Sends a request; resolves with its reply's value, rejects on its error or after `timeoutMs`. */
  ask<T>(request: { type: string; [field: string]: unknown }, timeoutMs: number): Promise<T>;
  stop(): Promise<void>;
}

/** Forks a bench/ script; `first` is the message it says it is ready with (deadline `readyMs`). */
export async function forkChild<Ready>(
  script: string,
  options: { args: string[]; execArgv: string[]; readyMs: number },
): Promise<{ forked: Forked; ready: Ready }> {
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), options.args, {
    execArgv: options.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let lastId = 0;
  const forked: Forked = {
    child,
    ask<T>(request: { type: string }, timeoutMs: number) {
      const id = ++lastId;
      const reply = waitFor<Reply<T>, Reply<T>>(child, timeoutMs, `${script} to answer ${request.type}`, (message) =>
        message.type === 'reply' && message.id === id ? message : undefined,
      );
      child.send({ ...request, id });
      return reply.then((message) => {
        if (message.error) throw new Error(`${script} ${request.type}: ${message.error}`);
        return message.value as T;
      });
    },
    stop: () => stopChild(child),
  };
  try {
    const ready = await waitFor<Ready, { type: string }>(child, options.readyMs, `${script} to start`, (message) =>
      message.type === 'ready' ? (message as Ready) : undefined,
    );
    return { forked, ready };
  } catch (error) {
    await forked.stop();
    throw error;
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  if (child.connected) child.send({ type: 'stop' });
  else child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
