import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE_ID = /^[\w.-]{1,128}$/;

/** The caller's X-Request-Id when it is a sane token (so it can be traced across services), else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
}
