import type { ServerResponse } from 'node:http';
import { sendJson } from '../http/send-json.ts';

/** /ready answers within this, database or not: a load balancer's probe must not hang. */
const READY_DEADLINE_MS = 2_000;

/** `/health`: the process is up. Says nothing of the database, so a restart loop never starts from it. */
export function sendHealth(res: ServerResponse): void {
  sendJson(res, 200, { status: 'ok' });
}

/**
 * `/ready`: the database answers too, so a load balancer stops sending traffic to an instance that
 * would answer 503 to everything (or that is draining).
 */
export async function sendReadiness(res: ServerResponse, check: () => Promise<void>, draining: boolean): Promise<void> {
  if (draining) return sendJson(res, 503, { status: 'draining' }, { 'Retry-After': '5' });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('readiness check timed out')), READY_DEADLINE_MS);
  });
  try {
    await Promise.race([check(), deadline]);
    sendJson(res, 200, { status: 'ready' });
  } catch {
    sendJson(res, 503, { status: 'unavailable' }, { 'Retry-After': '5' });
  } finally {
    clearTimeout(timer);
  }
}
