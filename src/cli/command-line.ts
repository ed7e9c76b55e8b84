// What `npm run keys`, `npm run documents` and `npm run webhooks` share: reading the command line, opening the database
// (MONGODB_URI, or DATA_DIR's embedded one), running a command and closing what it opened.

import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type Db, MongoError } from 'mongodb';
import { type Config, loadConfig } from '../config.ts';
import { DataDirInUseError, dataDirOwner } from '../db/data-dir-lock.ts';
import { NoEmbeddedDatabaseError, startEmbeddedDatabase } from '../db/embedded.ts';
import { readEmbeddedAddress } from '../db/embedded-address.ts';
import { connectDatabase, type Database } from '../db/mongo.ts';
import { DatabaseUnavailableError } from '../errors.ts';

type Options = NonNullable<ParseArgsConfig['options']>;
type Log = (message: string) => void;

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

/** An expected failure of a command that was used right: said on stderr, exit 1. */
export class CommandFailure extends Error {
  override name = 'CommandFailure';
}

/** Expected failures in words; only a bug earns a stack. */
function describeFailure(error: unknown): string {
  if (error instanceof CommandFailure || error instanceof DataDirInUseError) return error.message;
  if (error instanceof NoEmbeddedDatabaseError) return error.message;
  if (error instanceof MongoError) return `the database refused: ${error.message}`;
  const timedOut = error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
  if (timedOut || error instanceof DatabaseUnavailableError) return 'the database did not answer in time';
  return `unexpected failure: ${error instanceof Error ? error.stack : String(error)}`;
}

export interface CommandContext {
  /** Opened at the first call, so that a command can refuse its input before touching the database. */
  database: () => Promise<Db>;
  /** The settings, read as the service reads them (e.g. WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  config: Config;
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

/** Past this, a signal ends the process anyway: the user asked it to stop. */
const SIGNAL_CLEANUP_MS = 10_000;

/**
 * What a command opened, closed in reverse order exactly once: at its end, or on SIGINT/SIGTERM,
 * whichever comes first. Closing never throws; a failure is reported and the next step still runs.
 */
function createCleanup(report: Log) {
  const steps: { what: string; close: () => Promise<void> }[] = [];
  let running: Promise<void> | undefined;

  async function closeAll(): Promise<void> {
    for (const step of steps.reverse()) {
      await step.close().catch((error: unknown) => report(`closing ${step.what} failed: ${(error as Error).message}`));
    }
  }
  const run = (): Promise<void> => {
    running ??= closeAll();
    return running;
  };

  return {
    add(what: string, close: () => Promise<void>): void {
      steps.push({ what, close });
    },
    run,
    /** Ctrl-C or a supervisor's SIGTERM: close what is open (no embedded database outlives us), then exit. */
    onSignals(): void {
      const stop = (signal: NodeJS.Signals, code: number) => {
        report(`${signal}: stopping`);
        // A second signal while cleaning up means "now".
        process.once(signal, () => process.exit(code));
        void Promise.race([run(), sleep(SIGNAL_CLEANUP_MS)]).then(() => process.exit(code));
      };
      process.once('SIGINT', () => stop('SIGINT', 130));
      process.once('SIGTERM', () => stop('SIGTERM', 143));
    },
  };
}

type Cleanup = ReturnType<typeof createCleanup>;

/** A service starting on DATA_DIR publishes its database's address once that is ready: we wait this long. */
const OWNER_WAIT_MS = 15_000;
const OWNER_POLL_MS = 200;

/** Connection strings may carry a password: messages show everything but the user information. */
function withoutCredentials(uri: string): string {
  return uri.replace(/^([a-z+]+:\/\/)[^@/]*@/i, '$1***@');
}

/** Starts DATA_DIR's embedded database for this command; undefined when a service claimed DATA_DIR first. */
async function startOwn(directory: string, log: Log, cleanup: Cleanup) {
  const starting = startEmbeddedDatabase({ dataDir: directory, log });
  // Registered before it is ready, so an interrupt during the start still stops it.
  cleanup.add('the embedded database', async () => (await starting.catch(() => undefined))?.stop());
  try {
    const embedded = await starting;
    return { uri: embedded.uri, description: `the embedded ${embedded.kind} this command started on ${directory}` };
  } catch (error) {
    if (error instanceof DataDirInUseError) return undefined;
    throw error;
  }
}

/**
 * DATA_DIR's database: the one its running service published, else one started for this command.
 * A service that holds DATA_DIR but has not published yet is starting: wait for it, within a deadline.
 */
async function embeddedTarget(dataDir: string, log: Log, cleanup: Cleanup) {
  const directory = resolve(dataDir);
  const deadline = Date.now() + OWNER_WAIT_MS;
  let waitingFor: number | undefined;
  let startedOwn = false;
  for (;;) {
    const owner = dataDirOwner(directory);
    if (owner && owner.host !== hostname()) {
      throw new CommandFailure(
        `${directory} is in use by process ${owner.pid} on ${owner.host}: run this command there, or set MONGODB_URI`,
      );
    }
    if (owner) {
      const address = readEmbeddedAddress(directory);
      if (address?.pid === owner.pid) {
        return { uri: address.uri, description: `the ${address.kind} of process ${owner.pid} on ${directory}` };
      }
      if (waitingFor !== owner.pid) log(`process ${owner.pid} holds ${directory} and is starting: waiting for it`);
      waitingFor = owner.pid;
    } else {
      if (!startedOwn) log(`no service is running on ${directory}: starting its embedded database for this command`);
      startedOwn = true;
      const own = await startOwn(directory, log, cleanup);
      if (own) return own;
    }
    if (Date.now() >= deadline) {
      throw new CommandFailure(
        `process ${waitingFor ?? '?'} holds ${directory} but published no database address within ` +
          `${OWNER_WAIT_MS / 1000} s (still starting, or a version that does not publish it): try again, or set MONGODB_URI`,
      );
    }
    await sleep(OWNER_POLL_MS);
  }
}

/** The database the commands work on (described without credentials); `cleanup` closes what it opens. */
async function openCommandDatabase(config: Config, log: Log, cleanup: Cleanup): Promise<Db> {
  const target = config.MONGODB_URI
    ? { uri: config.MONGODB_URI, description: `MONGODB_URI (${withoutCredentials(config.MONGODB_URI)})` }
    : await embeddedTarget(config.DATA_DIR, log, cleanup);
  let database: Database;
  try {
    database = await connectDatabase(target.uri, config.MONGODB_DB);
  } catch (error) {
    throw new CommandFailure(`cannot reach the database, ${target.description}: ${(error as Error).message}`);
  }
  cleanup.add('the database connection', () => database.close());
  log(`database "${config.MONGODB_DB}" on ${target.description}`);
  return database.db;
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
    opening ??= openCommandDatabase(config, log, cleanup);
    return opening;
  };
  try {
    process.stdout.write(await program.run(command, { database, config }));
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
