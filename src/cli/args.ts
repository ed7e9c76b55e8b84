import { type ParseArgsConfig, parseArgs } from 'node:util';

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
