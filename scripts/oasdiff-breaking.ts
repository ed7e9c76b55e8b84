// `oasdiff breaking` as the contract gate (scripts/contract-gate.ts) runs it: JSON out, with the rules
// below raised to its error level, in an empty directory and without OASDIFF_* variables so that no
// stray configuration file or setting changes the verdict.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** oasdiff's levels in its JSON output. */
export const ERR = 3;
export const WARN = 2;
const DEADLINE_MS = 60_000;

/**
 * oasdiff's rules that report, below its error level, something a client built on the released
 * document trips on: a removed error response (clients branch on 404 or 400), a removed response
 * property or documented response header (clients read them), and the removal of a deprecated
 * operation, which may only go through planned-removals.json on its date.
 */
const RAISED_TO_ERROR = [
  'response-non-success-status-removed',
  'response-optional-property-removed',
  'optional-response-header-removed',
  'api-path-removed-with-deprecation',
  'api-removed-with-deprecation',
];

export interface OasdiffChange {
  id: string;
  text: string;
  level: number;
  operation?: string;
  path?: string;
}

/** The changes from `released` to `current`, each with its rule id, level, operation and path. */
export async function runOasdiff(oasdiff: string, released: string, current: string): Promise<OasdiffChange[]> {
  const dir = mkdtempSync(join(tmpdir(), 'contract-gate-'));
  try {
    const levels = join(dir, 'severity-levels.txt');
    writeFileSync(levels, RAISED_TO_ERROR.map((id) => `${id} ERR\n`).join(''));
    const args = [
      'breaking',
      released,
      current,
      '--format',
      'json',
      '--severity-levels',
      levels,
      '--allow-external-refs=false',
    ];
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OASDIFF_')));
    const options = { cwd: dir, env, timeout: DEADLINE_MS, maxBuffer: 16 << 20, killSignal: 'SIGKILL' as const };
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(oasdiff, args, options, (error, out, stderr) =>
        error ? reject(new Error(`oasdiff failed (${error.message.split('\n')[0]}):\n${stderr}`)) : resolve(out),
      ),
    );
    return JSON.parse(stdout || '[]') as OasdiffChange[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
