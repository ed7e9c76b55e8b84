// `npm run bench:alternate -- [--operation get] [--runs 40] [--seconds 0.5] [--repeat 1] [LEVEL ...]`:
// what a few microseconds cost, where `npm run bench` cannot tell. Our service at each log level
// (default info and silent: the access log's cost) in one process over one in-memory store, loaded
// in short runs that alternate between them (the order rotating), so both meet the same machine: on
// a shared VM single runs seconds apart move by 20-40%. Reports each level's time per request over
// all its runs, and the difference. Even so one such measurement is good to about 6 points on our
// VM, and processes differ: `--repeat N` measures N times, each in a new process, and summarises
// the shares (median, mean and its standard error). Add a level that also leaves the access log
// out (warn) to see the instrument's own zero beside it.

import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { LOG_LEVELS } from '../src/config.ts';
import { startFlags } from '../test/support/start-flags.ts';
import type { AlternateServerConfig } from './alternate-server.ts';
import { SERVICE_UNDER_TEST_FLAGS, waitFor } from './child.ts';
import { checkOnce, load } from './measure.ts';
import { OPERATIONS, type Operation, scenariosFor } from './scenarios.ts';
import { spread } from './summary.ts';

const SEEDED = 200;
const READY_WITHIN_MS = 60_000;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    operation: { type: 'string', default: 'get' },
    runs: { type: 'string', default: '40' },
    seconds: { type: 'string', default: '0.5' },
    repeat: { type: 'string', default: '1' },
  },
});
const levels = positionals.length > 0 ? positionals : ['info', 'silent'];
const operation = values.operation as Operation;
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const repeats = Number(values.repeat);
const problems = [
  ...levels.filter((level) => !(LOG_LEVELS as readonly string[]).includes(level)).map((l) => `unknown level ${l}`),
  ...(new Set(levels).size === levels.length ? [] : ['each level once']),
  ...((OPERATIONS as readonly string[]).includes(operation) ? [] : [`unknown operation ${operation}`]),
  ...(Number.isInteger(runs) && runs >= 2 ? [] : [`--runs ${values.runs}: expected an integer >= 2`]),
  ...(seconds >= 0.2 ? [] : [`--seconds ${values.seconds}: expected a number >= 0.2`]),
  ...(Number.isInteger(repeats) && repeats >= 1 ? [] : [`--repeat ${values.repeat}: expected an integer >= 1`]),
];
if (problems.length > 0) {
  console.error(
    `${problems.join('\n')}\nusage: npm run bench:alternate -- [--operation get] [--runs 40] [--seconds 0.5] [--repeat 1] [LEVEL ...]`,
  );
  process.exit(2);
}

const apiKey = `alternate-${randomBytes(16).toString('hex')}`;
const config: AlternateServerConfig = { levels, apiKey, seedPets: SEEDED };

/** One measurement in a new servers process: each level's µs per request over all its runs. */
async function measure(): Promise<number[]> {
  const child = fork('bench/alternate-server.ts', [JSON.stringify(config)], {
    execArgv: [...startFlags(), ...SERVICE_UNDER_TEST_FLAGS],
  });
  try {
    const urls = await waitFor(
      child,
      READY_WITHIN_MS,
      'the servers to start',
      (message: { urls?: string[] }) => message.urls,
    );
    const scenarios = urls.map((url) => {
      const scenario = scenariosFor('memory', { rest: url }, apiKey, 100, SEEDED).find(
        (s) => s.operation === operation,
      );
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
    return totals.map(({ requests, seconds: spent }) => (spent / requests) * 1e6);
  } finally {
    child.kill();
  }
}

const base = levels.at(-1) as string;
/** Each level's share of a request at the last level: 1 - its req/s over the last level's. */
const sharesOf = (usPerRequest: number[]) => usPerRequest.map((us) => (1 - (usPerRequest.at(-1) as number) / us) * 100);
console.log(`REST ${operation}, ${runs} alternations of ${seconds} s per level (in-memory store, 10 connections):`);
const shares: number[][] = [];
for (let measurement = 1; measurement <= repeats; measurement++) {
  const usPerRequest = await measure();
  const measuredShares = sharesOf(usPerRequest);
  shares.push(measuredShares);
  const last = usPerRequest.at(-1) as number;
  if (repeats > 1) console.log(`measurement ${measurement} of ${repeats}, in a new process:`);
  for (const [index, level] of levels.entries()) {
    const us = usPerRequest[index] as number;
    console.log(
      `${level.padEnd(8)} ${Math.round(1e6 / us)} req/s, ${us.toFixed(1)} µs a request` +
        (index < levels.length - 1
          ? `, ${(us - last).toFixed(1)} µs (${(measuredShares[index] as number).toFixed(1)}%) more than ${base}`
          : ''),
    );
  }
}
if (repeats > 1) {
  console.log(`over ${repeats} measurements, each level's share of a request at ${base}:`);
  for (const [index, level] of levels.slice(0, -1).entries()) {
    const values = shares.map((measured) => measured[index] as number);
    const { median, min, max } = spread(values);
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    const deviation = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1));
    console.log(
      `${level.padEnd(8)} median ${median.toFixed(1)}%, mean ${mean.toFixed(1)}% ± ${(deviation / Math.sqrt(values.length)).toFixed(1)} (standard error), ` +
        `from ${min.toFixed(1)} to ${max.toFixed(1)}%`,
    );
  }
}
