// Processes a test or the benchmark starts for real (redis-server, haproxy, the OpenTelemetry
// Collector) that must never outlive their starter, however it ends.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

// util-linux: asks the kernel to SIGKILL the command when its parent dies, even by SIGKILL; it execs
// the command, so the child's pid is the command's.
const SETPRIV = '/usr/bin/setpriv';

/** Every process started here that has not exited: killed when this process exits, whatever happened. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** `spawn`, tied to this process: under setpriv's parent-death signal where it exists, and killed at exit. */
export function spawnTied(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = existsSync(SETPRIV)
    ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args], options)
    : spawn(command, args, options);
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** Resolves once `child` has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once('exit', () => done()));
}
