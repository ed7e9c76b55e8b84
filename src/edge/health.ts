import { withDeadline } from '../db/deadline.ts';
import { RETRY_AFTER_SECONDS } from '../errors.ts';
import type { Exchange } from '../http/exchange.ts';
import { sendJson } from '../http/send-json.ts';

/** /ready answers within 2 s, database or not: a load balancer's probe must not hang. */
const READY_DEADLINE_MS = 1_500;
const RETRY_AFTER = { 'Retry-After': String(RETRY_AFTER_SECONDS) };
/**
 * How long one answer of the database serves every /ready: a burst of probes (thousands, with no key
 * needed) costs one ping, and a balancer checking every few seconds still reads fresh news.
 */
export const READY_ANSWER_TTL_MS = 1_000;

/** `/health`: the process is up. Says nothing of the database, so a restart loop never starts from it. */
export function sendHealth({ res }: Exchange): void {
  sendJson(res, 200, { status: 'ok' });
}

/**
 * Whether the database answers: one ping in flight at a time, shared by every caller, and its answer
 * (either way) kept for READY_ANSWER_TTL_MS.
 */
function sharedPing(ping: (signal: AbortSignal) => Promise<void>): () => Promise<boolean> {
  let inFlight: Promise<boolean> | undefined;
  let answer: { ok: boolean; at: number } | undefined;
  return () => {
    if (answer && performance.now() - answer.at < READY_ANSWER_TTL_MS) return Promise.resolve(answer.ok);
    inFlight ??= withDeadline(READY_DEADLINE_MS, ping)
      .then(
        () => true,
        () => false,
      )
      .then((ok) => {
        answer = { ok, at: performance.now() };
        inFlight = undefined;
        return ok;
      });
    return inFlight;
  };
}

/**
 * `/ready`: the database answers too, so a load balancer stops sending traffic to an instance that
 * would answer 503 to everything, or that is draining.
 */
export function createReadiness(ping: (signal: AbortSignal) => Promise<void>, isDraining: () => boolean) {
  const databaseAnswers = sharedPing(ping);
  return async ({ res }: Exchange): Promise<void> => {
    if (isDraining()) return sendJson(res, 503, { status: 'draining' }, RETRY_AFTER);
    if (await databaseAnswers()) return sendJson(res, 200, { status: 'ready' });
    sendJson(res, 503, { status: 'unavailable' }, RETRY_AFTER);
  };
}
