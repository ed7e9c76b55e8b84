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
