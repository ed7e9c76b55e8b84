// One autocannon run against one scenario, and the one-request check before it.

import autocannon from 'autocannon';
import type { HttpRequest, Scenario } from './scenarios.ts';

export interface Run {
  requestsPerSecond: number;
  requests: number;
  /** Milliseconds, from this process's own record (autocannon's histogram keeps whole ms only). */
  latencyMs: { p50: number; p99: number };
  /** Anything but 2xx, connection errors and timeouts: a clean run has none. */
  failures: number;
}

/** Sends the scenario's request once and runs its check; the error names the row and the body. */
export async function checkOnce(scenario: Pick<Scenario, 'request' | 'check'>, name: string): Promise<void> {
  const { url, method, headers, body } = scenario.request;
  const response = await fetch(url, { method, headers, body: body ?? null, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the check gets the text and says what it expected.
  }
  try {
    scenario.check(response.status, parsed);
  } catch (error) {
    throw new Error(
      `${name}: ${(error as Error).message}; ${method} ${url} answered ${response.status} ${text.slice(0, 300)}`,
    );
  }
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;

/**
 * Keeps `connections` requests in flight for `seconds`. No autocannon workers: the load runs on this
 * process's event loop, which serves nothing. Its own timeout (10 s) bounds every request.
 */
export async function load(request: HttpRequest, seconds: number, connections: number): Promise<Run> {
  const latencies: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    // sampleInt: autocannon checks its deadline once per sample, so at the default 1 s a 0.5 s run
    // lasts 1 s; at 100 ms, runs last what they say.
    const options = { ...request, connections, pipelining: 1, duration: seconds, timeout: 10, sampleInt: 100 };
    const instance = autocannon(options, (error: unknown, done) => (error ? reject(error) : resolve(done)));
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
  const sorted = Float64Array.from(latencies).sort();
  return {
    requestsPerSecond: result.requests.total / Math.max(result.duration, 0.001),
    requests: result.requests.total,
    latencyMs: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) },
    failures: result.non2xx + result.errors + result.timeouts,
  };
}
