import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { Db } from 'mongodb';
import { loadConfig } from '../config.ts';
import { createCleanup } from './cleanup.ts';
import { openCommandDatabase } from './command-database.ts';
import { describeFailure } from './failures.ts';

// What `npm run keys` and `npm run documents` share: reading the command line and running a command.

type Options = NonNullable<ParseArgsConfig['options']>;

/** The command line is wrong: exit 2, before anything touches the database. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface HelpCommand {
  command: 'help';
}

/** `parseArgs` whose complaints (unknown option, missing value) are usage errors like ours. */
export function parseCommandLine<const O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options });
  } catch (error) {
    if (String((error as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError((error as Error).message);
    }
    throw error;
  }
}

/** The one argument `command` takes after its name, else a usage error saying what it wants. */
export function onlyOne(command: string, what: string, positionals: string[], hint = ''): string {
  const [value, ...extra] = positionals;
  if (value === undefined) throw new UsageError(`${command} needs ${what}`);
  if (extra.length > 0) throw new UsageError(`${command} takes only ${what}${hint}`);
  return value;
}

export interface CommandContext {
  /** Opened at the first call, so that a command can refuse its input before touching the database. */
  database: () => Promise<Db>;
}

/** One `npm run <name> -- <command>` program: how it reads its command line and runs a command. */
export interface CommandLineProgram<Command extends { command: string }> {
  /** The npm script, which also prefixes every line the program writes on stderr. */
  name: string;
  usage: string;
  /** Throws UsageError when the command line is wrong. */
  parse: (argv: string[]) => Command | HelpCommand;
  /** Returns what goes to stdout (one JSON document with --json); throws CommandFailure when it cannot. */
  run: (command: Command, context: CommandContext) => Promise<string>;
}

const isHelp = <Command>(command: Command | HelpCommand): command is HelpCommand =>
  (command as HelpCommand).command === 'help';

/** Exit status: 0 done, 1 failed, 2 wrong usage or configuration (found before the database is touched). */
async function exitStatus<Command extends { command: string }>(
  program: CommandLineProgram<Command>,
  argv: string[],
): Promise<number> {
  const log = (message: string) => process.stderr.write(`${program.name}: ${message}\n`);
  let command: Command | HelpCommand;
  try {
    command = program.parse(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\nRun npm run ${program.name} -- --help for the usage.`);
    return 2;
  }
  if (isHelp(command)) {
    process.stdout.write(`${program.usage}\n`);
    return 0;
  }
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    log(`invalid configuration:\n${loaded.problems.map((problem) => `  - ${problem}`).join('\n')}`);
    return 2;
  }
  const { config } = loaded;
  const cleanup = createCleanup(log);
  cleanup.onSignals();
  let opening: Promise<Db> | undefined;
  const database = () => {
    opening ??= openCommandDatabase(config, log, cleanup).then((opened) => opened.db);
    return opening;
  };
  try {
    process.stdout.write(await program.run(command, { database }));
    return 0;
  } catch (error) {
    log(describeFailure(error));
    return 1;
  } finally {
    await cleanup.run();
  }
}

/** Runs the program on this process's arguments and sets its exit status. */
export async function runCommandLine<Command extends { command: string }>(
  program: CommandLineProgram<Command>,
): Promise<void> {
  process.exitCode = await exitStatus(program, process.argv.slice(2));
  // Everything was closed; should a driver timer linger anyway, it does not hold the shell prompt.
  setTimeout(() => process.exit(), 1_000).unref();
}
