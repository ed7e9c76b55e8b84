import { readFileSync } from 'node:fs';

/**
 * The Node flags `npm start` gives the service (package.json's start script is their one home), so
 * the benchmark and the soak run the service as users run it: the heap setting and the telemetry
 * entry (`--import=./dist/telemetry/register.js`, resolved from the working directory, which is the
 * repository's own wherever these flags are used).
 */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  return /node ((?:--\S+ )*)dist\/main\.js/.exec(pkg.scripts.start)?.[1]?.trim().split(' ').filter(Boolean) ?? [];
}
