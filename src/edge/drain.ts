import type { ServerResponse } from 'node:http';

/**
 * The responses not yet sent, and whether the service is draining: from then on /ready says 503 and
 * every response, those in flight included, carries `Connection: close`, so keep-alive clients move
 * to another instance instead of being reset.
 */
export function createDrain() {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  return {
    isDraining: () => draining,
    track(res: ServerResponse): void {
      if (draining) res.setHeader('Connection', 'close');
      inFlight.add(res);
    },
    done(res: ServerResponse): void {
      inFlight.delete(res);
    },
    start(): void {
      draining = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    },
  };
}

export type Drain = ReturnType<typeof createDrain>;
