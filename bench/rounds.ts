// The main measurement: every scenario checked once, then run in interleaved rounds (per round, per
// store, per operation: the targets in TARGETS order), each run after a discarded warm-up.

import type { Servers } from './child.ts';
import { checkOnce, load } from './measure.ts';
import { type Target, tracingModeOf } from './protocol.ts';
import { STORE_LABEL } from './report.ts';
import { OPERATION_LABEL, type Scenario } from './scenarios.ts';
import type { Settings } from './settings.ts';
import type { RoundRun } from './summary.ts';

const SETTLE_TIMEOUT_MS = 60_000;

/** The process serving a target: the main servers process, or a tracing process. */
export type ServersOf = (target: Target) => Servers;

/**
 * Work a run left queued in the servers must not run in the next one's window; and a create adds
 * pets, so the store is put back: every run meets the same seeded pets. Resolves with the RSS.
 */
function settle(serversOf: ServersOf, scenario: Scenario): Promise<number> {
  const reset = scenario.operation === 'create';
  return serversOf(scenario.target).ask({ type: 'settle', store: scenario.store, reset }, SETTLE_TIMEOUT_MS);
}

/** One request per scenario, checked, before any load: a wrong route answering 404 fast would win. */
export async function checkAll(serversOf: ServersOf, scenarios: Scenario[]): Promise<void> {
  for (const scenario of scenarios) {
    await checkOnce(
      scenario,
      `${STORE_LABEL[scenario.store]} / ${OPERATION_LABEL[scenario.operation]} / ${scenario.target}`,
    );
    await settle(serversOf, scenario);
  }
}

/** The runs, and the main servers process's RSS after each of its own. */
export async function runRounds(
  serversOf: ServersOf,
  scenarios: Scenario[],
  settings: Settings,
  progress: (text: string) => void,
): Promise<{ runs: RoundRun[]; rss: number[] }> {
  const runs: RoundRun[] = [];
  const rss: number[] = [];
  const { warmupSeconds, durationSeconds, connections } = settings;
  for (let round = 1; round <= settings.rounds; round++) {
    for (const store of settings.stores) {
      for (const operation of settings.operations) {
        progress(`[bench] round ${round}  ${STORE_LABEL[store].padEnd(15)}  ${OPERATION_LABEL[operation].padEnd(9)}`);
        for (const scenario of scenarios.filter((s) => s.store === store && s.operation === operation)) {
          if (warmupSeconds > 0) {
            await load(scenario.request, warmupSeconds, connections);
            await settle(serversOf, scenario);
          }
          const run = await load(scenario.request, durationSeconds, connections);
          const rssAfter = await settle(serversOf, scenario);
          if (!tracingModeOf(scenario.target)) rss.push(rssAfter);
          runs.push({ round, store, operation, target: scenario.target, description: scenario.description, run });
          progress(`  ${scenario.target} ${run.requestsPerSecond.toFixed(0)}`);
        }
        progress('\n');
      }
    }
  }
  return { runs, rss };
}
