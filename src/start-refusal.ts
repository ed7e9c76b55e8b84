// Imports nothing: telemetry/register.ts loads it before anything else.

/**
 * A start refused for a reason the person starting the service can fix (a variable, DATA_DIR, a port
 * in use): main.ts prints its message as one plain line on stderr, without a stack, and exits 1.
 * Anything else that stops a start is unexpected and is logged with its stack.
 */
export class StartRefusedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartRefusedError';
  }
}

/** A start the user can fix, said in one plain line on stderr (no stack, no JSON): main.ts and telemetry/register.ts. */
export function sayRefusal(reason: string): void {
  process.stderr.write(`petstore-gateway cannot start: ${reason.replace(/\s*\n\s*/g, ' ')}\n`);
}

/** Why a listen failed, when it is the user's to fix; undefined for anything unexpected. */
export function listenRefusal(code: string | undefined, variables: { port: string; host: string }): string | undefined {
  switch (code) {
    case 'EADDRINUSE':
      return `another process listens there: stop it, or set ${variables.port} to another port`;
    case 'EACCES':
      return `this user may not listen there (ports below 1024 need privileges): set ${variables.port} to another port`;
    case 'EADDRNOTAVAIL':
      return `no network interface of this machine has that address: check ${variables.host}`;
    case 'ENOTFOUND':
      return `that host name resolves to no address (a typo?): check ${variables.host}`;
    case 'EAI_AGAIN':
      return `that host name could not be resolved now (the name server did not answer): check ${variables.host}, or set it to an IP address`;
    default:
      return undefined;
  }
}
