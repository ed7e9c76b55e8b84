import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { startFlags } from './start-flags.ts';

const START_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 15_000;

export interface ServiceProcess {
  child: ChildProcess;
  origin: string;
  rssMb(): number;
  /** SIGTERM, then SIGKILL past the deadline; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export function rssMbOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/**
 * The compiled service (`npm run build` first) in its own process with the flags `npm start` uses,
 * resolved once it logs that it listens. Without MONGODB_URI in `env` it starts its embedded FerretDB.
 */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...startFlags(), 'dist/main.js'], {
    // info: the listening line says where it is (and the access log is part of what is measured).
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', MONGODB_URI: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const deadline = setTimeout(() => child.kill('SIGKILL'), START_DEADLINE_MS);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
    const code = await exited;
    clearTimeout(kill);
    return code;
  };
  for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) {
    const rest = /"rest":"([^"]+)"/.exec(line)?.[1];
    if (rest) {
      clearTimeout(deadline);
      // Keep reading so the service never blocks on a full pipe.
      child.stdout?.resume();
      return { child, origin: new URL(rest).origin, rssMb: () => rssMbOf(child.pid as number), stop };
    }
  }
  clearTimeout(deadline);
  throw new Error('the service exited before listening');
}
