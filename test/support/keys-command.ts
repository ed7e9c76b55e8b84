import { spawn } from 'node:child_process';

export interface KeysRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const { MONGODB_URI: _given, ...withoutUri } = process.env;

/**
 * `npm run --silent keys -- …` exactly as the README documents it (without --silent npm prints its
 * banner on stdout), killed if it hangs. The test run's MONGODB_URI is not passed on: `env` says
 * which database (MONGODB_URI and MONGODB_DB, or DATA_DIR for the embedded one).
 */
export function spawnKeys(args: string[], env: Record<string, string>) {
  const child = spawn('npm', ['run', '--silent', 'keys', '--', ...args], {
    env: { ...withoutUri, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 40_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<KeysRun>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

export const runKeys = (args: string[], env: Record<string, string>) => spawnKeys(args, env).done;
