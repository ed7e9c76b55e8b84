import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { type ResolvedTarget, resolveTarget, TargetRefusedError, targetProblem } from './webhook-target.ts';

/** Enough for any acknowledgement; a larger answer is cut there, so it costs no more reading or waiting. */
export const RESPONSE_READ_LIMIT_BYTES = 64 * 1024;
/** A receiver's Retry-After is honoured up to a day: further out, it is a misconfiguration, not a plan. */
export const RETRY_AFTER_CAP_MS = 24 * 60 * 60 * 1000;
export const WEBHOOK_USER_AGENT = 'petstore-gateway-webhooks';

export interface AttemptRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
}

export interface AttemptResult {
  /** The receiver's status, null when none came. */
  status: number | null;
  /** From the start to the end of the response, or to the failure. */
  latencyMs: number;
  /** The receiver's Retry-After (delta-seconds or HTTP-date), capped at RETRY_AFTER_CAP_MS. */
  retryAfterMs?: number;
  /** Short and safe to store and show: never the URL's path or query, nor a header. */
  error?: string;
}

type Outcome = Omit<AttemptResult, 'latencyMs'>;

const CLOSED_MID_RESPONSE = 'closed mid-response';

/** What an operator reads for the errors a receiver's network gives before any answer. */
const CONNECTION_ERRORS = new Map<string, string>([
  ['ECONNREFUSED', 'connection refused'],
  ['ECONNRESET', 'connection closed before a response'],
  ['EPIPE', 'connection closed before a response'],
  ['ENOTFOUND', 'host not found'],
  ['EAI_AGAIN', 'host lookup failed for now'],
  ['EHOSTUNREACH', 'host unreachable'],
  ['ENETUNREACH', 'network unreachable'],
  ['ETIMEDOUT', 'connection timed out'],
]);

/** A short text for a failure before the answer: Node's messages name addresses and ports; codes do not. */
function failureOf(error: unknown): string {
  if (error instanceof TargetRefusedError) return error.message;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || !/^[A-Z0-9_]+$/.test(code)) return 'request failed';
  return CONNECTION_ERRORS.get(code) ?? `request failed (${code})`;
}

/** Delta-seconds or an HTTP-date, in ms from now; a date in the past means now. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now;
  return Number.isNaN(ms) ? undefined : Math.min(Math.max(ms, 0), RETRY_AFTER_CAP_MS);
}

/** Hands Node the address resolveTarget checked, so the connection never resolves the name a second time. */
function pinnedLookup({ address, family }: ResolvedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * One deadline for the whole attempt and the caller's cancel, in one signal whose abort reason is the
 * text to report. Released when the attempt ends, so a long-lived caller's signal keeps no listeners.
 */
function attemptSignal(timeoutMs: number, cancelled?: AbortSignal) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`timed out after ${timeoutMs / 1000} s`)), timeoutMs);
  const cancel = () => controller.abort(new Error('cancelled'));
  if (cancelled?.aborted) cancel();
  cancelled?.addEventListener('abort', cancel, { once: true });
  const release = () => {
    clearTimeout(timer);
    cancelled?.removeEventListener('abort', cancel);
  };
  return { signal: controller.signal, release };
}

const abortText = (signal: AbortSignal) => (signal.reason as Error).message;

/** Reads the answer up to the limit and lets `done` cut the rest; a close before its end is reported. */
function readAnswer(response: IncomingMessage, done: (error?: string) => void): void {
  let read = 0;
  response.on('data', (chunk: Buffer) => {
    read += chunk.byteLength;
    if (read >= RESPONSE_READ_LIMIT_BYTES) done();
  });
  response.on('end', () => done());
  response.on('error', () => done(CLOSED_MID_RESPONSE));
  response.on('close', () => done(response.complete ? undefined : CLOSED_MID_RESPONSE));
}

/**
 * One POST to the checked address on a connection of its own (no agent), destroyed once the answer is
 * read, cut or late. The Host header and SNI keep the URL's name, so the certificate is verified against it.
 */
function exchange(url: URL, target: ResolvedTarget, request: AttemptRequest, signal: AbortSignal): Promise<Outcome> {
  return new Promise((resolve) => {
    let outcome: Outcome = { status: null };
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const headers = {
      ...request.headers,
      host: url.host,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(request.body)),
      'user-agent': WEBHOOK_USER_AGENT,
    };
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request({
      method: 'POST',
      hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      headers,
      agent: false,
      lookup: pinnedLookup(target),
      family: target.family,
      // A name, never an address, goes in SNI (RFC 6066); for an address Node leaves it out.
      ...(isIP(hostname) === 0 && { servername: hostname }),
    });
    const settle = (error?: string) => {
      signal.removeEventListener('abort', onAbort);
      req.destroy();
      resolve(error === undefined ? outcome : { ...outcome, error });
    };
    const onAbort = () => settle(abortText(signal));
    req.on('error', (error) => settle(outcome.status === null ? failureOf(error) : CLOSED_MID_RESPONSE));
    req.on('response', (response) => {
      const status = response.statusCode ?? null;
      const retryAfterMs = parseRetryAfter(response.headers['retry-after'], Date.now());
      outcome = { status, ...(retryAfterMs !== undefined && { retryAfterMs }) };
      if (status !== null && status >= 300 && status < 400) outcome.error = `redirect not followed (${status})`;
      readAnswer(response, settle);
    });
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    req.end(request.body);
  });
}

/**
 * One delivery attempt: checks and resolves the target, POSTs the body, reads a bounded answer. Never
 * throws; whether the status counts as delivered is the caller's decision.
 */
export async function attemptDelivery(request: AttemptRequest): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const problem = targetProblem(request.url, { allowPrivate: request.allowPrivate });
  if (problem !== undefined) return { status: null, latencyMs: elapsed(), error: problem };
  const { signal, release } = attemptSignal(request.timeoutMs, request.signal);
  try {
    const url = new URL(request.url);
    const target = await resolveTarget(url, { allowPrivate: request.allowPrivate, signal });
    return { ...(await exchange(url, target, request, signal)), latencyMs: elapsed() };
  } catch (error) {
    return { status: null, latencyMs: elapsed(), error: signal.aborted ? abortText(signal) : failureOf(error) };
  } finally {
    release();
  }
}
