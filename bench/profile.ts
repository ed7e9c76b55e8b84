// `npm run profile -- TARGET OPERATION [--level LEVEL] [--seconds N]`: where one request's time goes.
// Forks bench/profile-server.ts under --cpu-prof (TARGET floor, the fastify or mercurius peer, or
// rest / graphql / graphql-by-id on our service; the log at info unless --level says otherwise), checks one request, warms up for 1 s,
// then loads it like `npm run bench` does (autocannon, 10 connections, from this process) and reports
// the measured window's time per request: on the main thread from the profile, and across every
// thread from process.cpuUsage. The .cpuprofile stays in bench/results/profiles/ for DevTools.

import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LOG_LEVELS } from '../src/config.ts';
import { startFlags } from '../test/support/start-flags.ts';
import { SERVICE_UNDER_TEST_FLAGS, waitFor } from './child.ts';
import { checkOnce, load } from './measure.ts';
import { formatReport, reportProfile } from './profile-report.ts';
import type { ProfileServerConfig, ProfileWindow } from './profile-server.ts';
import type { Target } from './protocol.ts';
import { OPERATIONS, type Operation, scenariosFor } from './scenarios.ts';

const PROFILED_TARGETS = [
  'floor',
  'fastify',
  'mercurius',
  'rest',
  'graphql',
  'graphql-by-id',
] as const satisfies readonly Target[];
const SEEDED = 200;
const SAMPLE_ID = 100;
const READY_WITHIN_MS = 60_000;
const EXIT_WITHIN_MS = 30_000;

function usage(problem: string): never {
  console.error(
    `${problem}\nusage: npm run profile -- ${PROFILED_TARGETS.join('|')} ${OPERATIONS.join('|')} [--level info] [--seconds 8]`,
  );
  process.exit(2);
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { level: { type: 'string', default: 'info' }, seconds: { type: 'string', default: '8' } },
});
const [target = 'rest', operation = 'get'] = positionals as [Target?, Operation?];
const seconds = Number(values.seconds);
if (!(PROFILED_TARGETS as readonly string[]).includes(target)) usage(`unknown target ${target}`);
if (!(OPERATIONS as readonly string[]).includes(operation)) usage(`unknown operation ${operation}`);
if (!(LOG_LEVELS as readonly string[]).includes(values.level)) usage(`unknown level ${values.level}`);
if (!(seconds >= 1)) usage(`--seconds ${values.seconds}: expected a number >= 1`);

/** The child's next message of this type, within the deadline. */
const nextMessage = <T>(child: ChildProcess, type: string, withinMs: number): Promise<T> =>
  waitFor(child, withinMs, `'${type}' from the profiled server`, (message: { type?: string }) =>
    message.type === type ? (message as T) : undefined,
  );

const directory = join('bench', 'results', 'profiles', `${target}-${operation}-${values.level}`);
rmSync(directory, { recursive: true, force: true });
mkdirSync(directory, { recursive: true });
const apiKey = `profile-${randomBytes(16).toString('hex')}`;
const config: ProfileServerConfig = {
  target: target === 'floor' || target === 'fastify' || target === 'mercurius' ? target : 'service',
  logLevel: values.level,
  apiKey,
  seedPets: SEEDED,
};
const child = fork('bench/profile-server.ts', [JSON.stringify(config)], {
  execArgv: [...startFlags(), ...SERVICE_UNDER_TEST_FLAGS, '--cpu-prof', `--cpu-prof-dir=${directory}`],
});
try {
  const { url } = await nextMessage<{ url: string }>(child, 'ready', READY_WITHIN_MS);
  const scenario = scenariosFor('memory', { [target]: url }, apiKey, SAMPLE_ID, SEEDED).find(
    (candidate) => candidate.operation === operation,
  );
  if (!scenario) usage(`${target} does not run ${operation}`);
  await checkOnce(scenario, `${target} ${operation}`);
  await load(scenario.request, 1, 10);
  child.send('mark');
  const run = await load(scenario.request, seconds, 10);
  const windowEnded = nextMessage<ProfileWindow>(child, 'window', EXIT_WITHIN_MS);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send('stop');
  const window = await windowEnded;
  await exited;
  const profile = readdirSync(directory).find((name) => name.endsWith('.cpuprofile'));
  if (!profile) throw new Error(`no .cpuprofile in ${directory}`);
  console.log(`${target} ${operation}, log ${values.level}: ${scenario.description}`);
  console.log(
    `${Math.round(run.requestsPerSecond)} req/s, ${run.failures} failed; profile: ${join(directory, profile)}\n`,
  );
  console.log(formatReport(reportProfile(join(directory, profile), window)));
} finally {
  if (child.exitCode === null) child.kill('SIGKILL');
}
