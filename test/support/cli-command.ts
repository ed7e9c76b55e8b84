import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The project's commands that work on the database: `npm run keys`, `documents` and `webhooks`. */
export type DatabaseCommand = 'keys' | 'documents' | 'webhooks';

export interface CommandOptions {
  /** Where the operator runs npm (relative FILE arguments are read from there); default the project. */
  cwd?: string;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { MONGODB_URI: _given, ...withoutUri } = process.env;

/**
 * `npm run --silent <command> -- …` exactly as docs/keys-and-documents.md documents it (without
 * --silent npm prints its banner on stdout), killed if it hangs. The test run's MONGODB_URI is not passed on: `env` says
 * which database (MONGODB_URI and MONGODB_DB, or DATA_DIR for the embedded one).
 */
export function spawnCommand(
  command: DatabaseCommand,
  args: string[],
  env: Record<string, string>,
  { cwd }: CommandOptions = {},
) {
  // From elsewhere, npm finds the project by --prefix, as an operator's `npm --prefix` would.
  const prefix = cwd ? ['--prefix', ROOT] : [];
  const child = spawn('npm', [...prefix, 'run', '--silent', command, '--', ...args], {
    cwd: cwd ?? ROOT,
    env: { ...withoutUri, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 40_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CommandRun>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

export const spawnKeys = (args: string[], env: Record<string, string>) => spawnCommand('keys', args, env);
export const runKeys = (args: string[], env: Record<string, string>) => spawnKeys(args, env).done;
export const runDocuments = (args: string[], env: Record<string, string>, options?: CommandOptions) =>
  spawnCommand('documents', args, env, options).done;
export const runWebhooks = (args: string[], env: Record<string, string>) => spawnCommand('webhooks', args, env).done;
