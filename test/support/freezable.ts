// Freezing a process a test owns (SIGSTOP): its port still accepts connections, nothing is answered.

export interface Freezable {
  /** SIGSTOP. */
  freeze(): void;
  /** SIGCONT if frozen; safe to repeat. */
  thaw(): void;
  /** The process is gone (killed or replaced): there is nothing left to thaw. */
  forget(): void;
}

/** Freeze and thaw through `signal`, which sends a signal to the process while it runs. */
export function freezable(signal: (name: NodeJS.Signals) => void): Freezable {
  let frozen = false;
  return {
    freeze() {
      signal('SIGSTOP');
      frozen = true;
    },
    thaw() {
      if (frozen) signal('SIGCONT');
      frozen = false;
    },
    forget() {
      frozen = false;
    },
  };
}
