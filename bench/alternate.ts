// `npm run bench:alternate -- [--operation get] [--runs 40] [--seconds 0.5] [LEVEL ...]`: what a
// few microseconds cost, where `npm run bench` cannot tell. Our service at each log level (default
// info and silent: the access log's cost) in one process over one in-memory store, loaded in short
// runs that alternate between them (the order rotating), so both meet the same machine: on a shared
// VM single runs seconds apart move by 20-40%, while two identical services alternated this way
// agree within 0.3%. Reports each level's time per request over all its runs, and the difference.

import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { LOG_LEVELS } from '../src/config.ts';
import type { AlternateServerConfig } from './alternate-server.ts';
import { SERVICE_UNDER_TEST_FLAGS, waitFor } from './child.ts';
import { checkOnce, load } from './measure.ts';
import { OPERATIONS, type Operation, scenariosFor } from './scenarios.ts';

const SEEDED = 200;
const READY_WITHIN_MS = 60_000;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    operation: { type: 'string', default: 'get' },
    runs: { type: 'string', default: '40' },
    seconds: { type: 'string', default: '0.5' },
  },
});
const levels = positionals.length > 0 ? positionals : ['info', 'silent'];
const operation = values.operation as Operation;
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const problems = [
  ...levels.filter((level) => !(LOG_LEVELS as readonly string[]).includes(level)).map((l) => `unknown level ${l}`),
  ...(new Set(levels).size === levels.length ? [] : ['each level once']),
  ...((OPERATIONS as readonly string[]).includes(operation) ? [] : [`unknown operation ${operation}`]),
  ...(Number.isInteger(runs) && runs >= 2 ? [] : [`--runs ${values.runs}: expected an integer >= 2`]),
  ...(seconds >= 0.2 ? [] : [`--seconds ${values.seconds}: expected a number >= 0.2`]),
];
if (problems.length > 0) {
  console.error(
    `${problems.join('\n')}\nusage: npm run bench:alternate -- [--operation get] [--runs 40] [--seconds 0.5] [LEVEL ...]`,
  );
  process.exit(2);
}

const apiKey = `alternate-${randomBytes(16).toString('hex')}`;
const config: AlternateServerConfig = { levels, apiKey, seedPets: SEEDED };
const child = fork('bench/alternate-server.ts', [JSON.stringify(config)], {
  execArgv: [...SERVICE_UNDER_TEST_FLAGS, '--max-semi-space-size=8'],
});
try {
  const urls = await waitFor(
    child,
    READY_WITHIN_MS,
    'the servers to start',
    (message: { urls?: string[] }) => message.urls,
  );
  const scenarios = urls.map((url) => {
    const scenario = scenariosFor('memory', { rest: url }, apiKey, 100, SEEDED).find((s) => s.operation === operation);
    if (!scenario) throw new Error(`rest does not run ${operation}`);
    return scenario;
  });
  for (const [index, scenario] of scenarios.entries()) {
    await checkOnce(scenario, `${levels[index]} ${operation}`);
    await load(scenario.request, 1, 10);
  }
  const totals = levels.map(() => ({ requests: 0, seconds: 0 }));
  for (let run = 0; run < runs; run++) {
    for (let step = 0; step < levels.length; step++) {
      const index = (run + step) % levels.length;
      const measured = await load((scenarios[index] as (typeof scenarios)[number]).request, seconds, 10);
      const total = totals[index] as (typeof totals)[number];
      total.requests += measured.requests;
      total.seconds += measured.requests / measured.requestsPerSecond;
    }
  }
  const usPerRequest = totals.map(({ requests, seconds: spent }) => (spent / requests) * 1e6);
  const last = usPerRequest.at(-1) as number;
  console.log(`REST ${operation}, ${runs} alternations of ${seconds} s per level (in-memory store, 10 connections):`);
  for (const [index, level] of levels.entries()) {
    const us = usPerRequest[index] as number;
    const share = (1 - last / us) * 100;
    console.log(
      `${level.padEnd(8)} ${Math.round(1e6 / us)} req/s, ${us.toFixed(1)} µs a request` +
        (index < levels.length - 1
          ? `, ${(us - last).toFixed(1)} µs (${share.toFixed(1)}%) more than ${levels.at(-1)}`
          : ''),
    );
  }
} finally {
  child.kill();
}
