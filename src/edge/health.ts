import { withDeadline } from '../db/deadline.ts';
import { RETRY_AFTER_SECONDS } from '../errors.ts';
import type { RequestScope } from '../http/request-scope.ts';
import { sendJson } from '../http/send-json.ts';

/** /ready answers within 2 s, database or not: a load balancer's probe must not hang. */
const READY_DEADLINE_MS = 1_500;
const RETRY_AFTER = { 'Retry-After': String(RETRY_AFTER_SECONDS) };

/** `/health`: the process is up. Says nothing of the database, so a restart loop never starts from it. */
export function sendHealth({ res }: RequestScope): void {
  sendJson(res, 200, { status: 'ok' });
}

/**
 * `/ready`: the database answers too, so a load balancer stops sending traffic to an instance that
 * would answer 503 to everything, or that is draining.
 */
export function createReadiness(ping: (signal: AbortSignal) => Promise<void>, isDraining: () => boolean) {
  return async ({ res }: RequestScope): Promise<void> => {
    if (isDraining()) return sendJson(res, 503, { status: 'draining' }, RETRY_AFTER);
    try {
      await withDeadline(READY_DEADLINE_MS, ping);
      sendJson(res, 200, { status: 'ready' });
    } catch {
      sendJson(res, 503, { status: 'unavailable' }, RETRY_AFTER);
    }
  };
}
