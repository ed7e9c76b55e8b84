// A real redis-server of the caller's own (Debian's package), for the tests and the benchmark: on a
// free loopback port, nothing written to disk, started within a deadline, and never outliving its
// starter. It may be frozen (SIGSTOP), thawed, killed like a crash and started again on its port.
import type { ChildProcess } from 'node:child_process';
import { freePort } from './free-port.ts';
import { freezable } from './freezable.ts';
import { exited, spawnTied } from './tied-process.ts';

export interface RedisServer {
  /** redis://127.0.0.1:PORT */
  url: string;
  port: number;
  /** The redis-server process now (another one after `restart`). */
  pid(): number;
  /** SIGSTOP: the port still accepts connections, but nothing is answered. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  /** SIGKILL, as a crash: connections drop at once. */
  kill(): Promise<void>;
  /** A fresh (empty) server on the same port, after `kill`. */
  restart(): Promise<void>;
  /** Thaws, stops (idempotent); SIGKILL if it does not exit in time. */
  stop(): Promise<void>;
}

const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
/** Starts redis-server on `port` and resolves once it accepts connections; rejects with its output otherwise. */
function spawnRedis(port: number): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  args.push('--daemonize', 'no', '--loglevel', 'notice');
  const child = spawnTied(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`redis-server on port ${port} ${why}:\n${output.slice(-2_000)}`));
    };
    const timer = setTimeout(() => fail(`did not start within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('Ready to accept connections')) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve(child);
    };
    const onExit = (code: number | null, signal: string | null) => fail(`exited (${code ?? signal}) while starting`);
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', onExit);
    child.once('error', (error) => fail(`could not be run (${error.message})`));
  });
}

export async function startRedisServer(): Promise<RedisServer> {
  let port = 0;
  let child: ChildProcess | undefined;
  // Another process may take the free port before redis-server binds it: try another.
  for (let attempt = 1; !child; attempt++) {
    port = await freePort();
    try {
      child = await spawnRedis(port);
    } catch (error) {
      if (attempt >= 3 || !/Address already in use/.test((error as Error).message)) throw error;
    }
  }
  let current: ChildProcess = child;
  const signal = (name: NodeJS.Signals) => {
    if (current.exitCode === null && current.signalCode === null) current.kill(name);
  };
  const pause = freezable(signal);
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: () => current.pid as number,
    freeze: pause.freeze,
    thaw: pause.thaw,
    async kill() {
      pause.forget();
      signal('SIGKILL');
      await exited(current);
    },
    async restart() {
      await server.kill();
      current = await spawnRedis(port);
    },
    async stop() {
      server.thaw();
      const gone = exited(current);
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), STOP_TIMEOUT_MS);
      await gone;
      clearTimeout(timer);
    },
  };
  return server;
}
