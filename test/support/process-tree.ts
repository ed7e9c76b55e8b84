// What /proc says about the processes a script started: the service's memory, and what to kill when
// it must go (npm -> node -> FerretDB; npm's children outlive a killed npm as orphans).
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Those of `pids` still running: a test proves that none it started is left. */
export function alive(pids: Iterable<number>): number[] {
  return [...pids].filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
}

export function rssMbOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Processes whose command line names `dir` or that run in it: what a clean stop leaves none of. */
export function processesUsing(dir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const cwd = readlinkSync(`/proc/${pid}/cwd`);
        return cwd.startsWith(dir) || readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Every process below `pid`, nearest first. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent pid is the second field after the parenthesised command name.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // It exited while we read.
    }
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const below = children.get(queue.shift() as number) ?? [];
    found.push(...below);
    queue.push(...below);
  }
  return found;
}

/**
 * SIGKILL to the process, everything below it now, and what was below it when `remember` ran (since
 * orphaned); a remembered pid that now runs another command is spared.
 */
export function processTreeKiller(child: ChildProcess): { remember(): void; kill(): void } {
  const known = new Map<number, string>();
  const family = () => [child.pid as number, ...descendantsOf(child.pid as number)];
  return {
    remember: () => {
      for (const pid of family()) known.set(pid, commandLineOf(pid));
    },
    kill: () => {
      // An exited child's pid may already belong to another process.
      const now = child.exitCode === null && child.signalCode === null ? family() : [];
      const orphans = [...known].filter(([pid, command]) => !now.includes(pid) && commandLineOf(pid) === command);
      for (const pid of [...now, ...orphans.map(([pid]) => pid)]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    },
  };
}
