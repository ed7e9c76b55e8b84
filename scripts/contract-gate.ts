// The contract gate: fails (exit 1), naming each change, when schema/schema.graphql or
// schema/openapi.yaml breaks what was released (schema/released/), so a client built on the released
// contracts keeps working. GraphQL is diffed by graphql-js, OpenAPI by oasdiff (tools/oasdiff, built by
// scripts/build-oasdiff.ts). Removals announced with a date (schema/released/planned-removals.json) pass
// from that date on. `--release` makes the current contracts the new baseline (docs/development.md).
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { BreakingChangeType, buildSchema, findBreakingChanges, findDangerousChanges } from 'graphql';
import { parse } from 'yaml';
import { z } from 'zod';
import { BUILD_OASDIFF_COMMAND, oasdiffBinaryPath } from './build-oasdiff.ts';
import { ERR, runOasdiff, WARN } from './oasdiff-breaking.ts';

const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
export const CONTRACTS = {
  released: root('schema/released'),
  graphql: root('schema/schema.graphql'),
  openapi: root('schema/openapi.yaml'),
};

export interface GateOptions {
  released: string;
  graphql: string;
  openapi: string;
  /** Decides which planned removals are due. */
  today: Date;
  /** The oasdiff binary; missing, the gate fails saying how to build it. */
  oasdiff: string;
}

export interface GateResult {
  breaking: string[];
  warnings: string[];
  /** Planned removals found past their date. */
  allowed: string[];
}

/** What removing an operation is reported as, whatever its deprecation state. */
const OPERATION_REMOVED = /^api-(path-)?removed-/;

const day = z.string().regex(/^\d{4}-\d\d-\d\d$/, 'a date as YYYY-MM-DD');
const plannedRemovals = z.object({
  removals: z.array(
    z.discriminatedUnion('contract', [
      z.object({ contract: z.literal('openapi'), method: z.string(), path: z.string(), date: day }),
      z.object({ contract: z.literal('graphql'), coordinate: z.string(), date: day }),
    ]),
  ),
});
type PlannedRemoval = z.infer<typeof plannedRemovals>['removals'][number];

function readPlannedRemovals(released: string): PlannedRemoval[] {
  const file = join(released, 'planned-removals.json');
  return existsSync(file) ? plannedRemovals.parse(JSON.parse(readFileSync(file, 'utf8'))).removals : [];
}

/** Sorts a change under `allowed` when a due planned removal covers it, else under `breaking`. */
function sort(result: GateResult, change: string, planned: PlannedRemoval | undefined, today: Date): void {
  if (planned && today.getTime() >= Date.parse(`${planned.date}T00:00:00Z`)) {
    result.allowed.push(`${change} (planned removal, due ${planned.date})`);
  } else {
    result.breaking.push(planned ? `${change} (planned for ${planned.date}: not allowed before then)` : change);
  }
}

export function diffGraphql(released: string, current: string, removals: PlannedRemoval[], today: Date): GateResult {
  const [before, after] = [buildSchema(released), buildSchema(current)];
  const result: GateResult = { breaking: [], warnings: [], allowed: [] };
  for (const change of findBreakingChanges(before, after)) {
    const planned = removals.find(
      (removal) =>
        removal.contract === 'graphql' &&
        change.type === BreakingChangeType.FIELD_REMOVED &&
        change.description === `${removal.coordinate} was removed.`,
    );
    sort(result, `GraphQL ${change.type}: ${change.description}`, planned, today);
  }
  for (const change of findDangerousChanges(before, after))
    result.warnings.push(`GraphQL ${change.type}: ${change.description}`);
  return result;
}

export async function diffOpenapi(options: GateOptions, removals: PlannedRemoval[]): Promise<GateResult> {
  const changes = await runOasdiff(options.oasdiff, join(options.released, 'openapi.json'), options.openapi);
  const result: GateResult = { breaking: [], warnings: [], allowed: [] };
  for (const change of changes) {
    const line = `OpenAPI ${change.operation ?? ''} ${change.path ?? ''}: ${change.text} [${change.id}]`;
    if (change.level === WARN) result.warnings.push(line);
    if (change.level < ERR) continue;
    const planned = removals.find(
      (removal) =>
        removal.contract === 'openapi' &&
        OPERATION_REMOVED.test(change.id) &&
        removal.method.toUpperCase() === change.operation &&
        removal.path === change.path,
    );
    sort(result, line, planned, options.today);
  }
  return result;
}

export async function checkContracts(options: GateOptions): Promise<GateResult> {
  if (!existsSync(options.oasdiff)) {
    throw new Error(
      `oasdiff is not built (${options.oasdiff}): build it with \`${BUILD_OASDIFF_COMMAND}\` ` +
        '(Go 1.26 and the Go module proxy; CI does it in its "oasdiff build" step). The gate does not pass without it.',
    );
  }
  const removals = readPlannedRemovals(options.released);
  const read = (file: string) => readFileSync(file, 'utf8');
  const graphql = diffGraphql(
    read(join(options.released, 'schema.graphql')),
    read(options.graphql),
    removals,
    options.today,
  );
  const openapi = await diffOpenapi(options, removals);
  return {
    breaking: [...graphql.breaking, ...openapi.breaking],
    warnings: [...graphql.warnings, ...openapi.warnings],
    allowed: [...graphql.allowed, ...openapi.allowed],
  };
}

/** The release step: the current contracts become the baseline (the OpenAPI one as JSON, as served). */
export function release({ released, graphql, openapi }: Pick<GateOptions, 'released' | 'graphql' | 'openapi'>): void {
  copyFileSync(graphql, join(released, 'schema.graphql'));
  const document: unknown = parse(readFileSync(openapi, 'utf8'));
  writeFileSync(join(released, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
}

function parseOptions(argv: string[]): GateOptions & { release: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      release: { type: 'boolean', default: false },
      date: { type: 'string' },
      released: { type: 'string', default: CONTRACTS.released },
      graphql: { type: 'string', default: CONTRACTS.graphql },
      openapi: { type: 'string', default: CONTRACTS.openapi },
      oasdiff: { type: 'string', default: oasdiffBinaryPath() },
    },
  });
  const today = values.date === undefined ? new Date() : new Date(`${day.parse(values.date)}T00:00:00Z`);
  if (Number.isNaN(today.getTime())) throw new Error(`--date ${values.date} is not a date`);
  return { ...values, today };
}

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  const baseline = relative(process.cwd(), options.released) || '.';
  if (options.release) {
    release(options);
    console.log(`released: the current contracts are now the baseline in ${baseline}`);
    return 0;
  }
  const { breaking, warnings, allowed } = await checkContracts(options);
  for (const line of allowed) console.log(`allowed: ${line}`);
  for (const line of warnings) console.log(`warning: ${line}`);
  if (breaking.length === 0) {
    console.log(`contract gate: no breaking change against ${baseline}`);
    return 0;
  }
  console.error(`contract gate: ${breaking.length} breaking change(s) against ${baseline}:`);
  for (const line of breaking) console.error(`  ${line}`);
  console.error('A client built on the released contracts would break. Keep the old shape, or see');
  console.error('"Releasing a contract change" in docs/development.md.');
  return 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`contract gate: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  });
}
