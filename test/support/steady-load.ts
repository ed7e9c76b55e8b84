// Open-loop load for the fleet tests: requests go out at a steady rate whatever the answers, as a
// fleet's clients send them, over keep-alive connections, and every outcome is kept.
import { Agent, request } from 'node:http';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

export interface Outcome {
  /** The HTTP status, or undefined when the request failed without one (refused, reset). */
  status?: number;
  error?: string;
  ms: number;
  /** When it was sent, in ms since the load started. */
  at: number;
  /** The start of a 5xx answer's body. */
  body?: string;
}

/** One request on `agent`; never rejects, so a refused connection is counted rather than thrown. */
export function send(origin: string, agent: Agent, spec: LoadRequest): Promise<Outcome> {
  const started = performance.now();
  const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
  const headers = body ? { ...spec.headers, 'Content-Type': 'application/json' } : spec.headers;
  return new Promise((resolve) => {
    const req = request(`${origin}${spec.path}`, { method: spec.method, agent, headers, timeout: 20_000 }, (res) => {
      // A failure's body says who answered: the service's Error JSON or the balancer's own page.
      let body = '';
      if ((res.statusCode ?? 0) >= 500) res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      else res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          ms: performance.now() - started,
          at: started,
          ...(body ? { body: body.slice(0, 200) } : {}),
        }),
      );
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 20 s')));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.code ?? error.message, ms: performance.now() - started, at: started }),
    );
    req.end(body);
  });
}

export interface SteadyLoad {
  /** Stops sending, waits for the answers still due, and gives every outcome in the order sent. */
  stop(): Promise<Outcome[]>;
}

/** `perSecond` requests a second, the i-th being `next(i)`, until stopped. */
export function steadyLoad(origin: string, perSecond: number, next: (i: number) => LoadRequest): SteadyLoad {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const tickMs = 20;
  const startedAt = performance.now();
  const pending: Promise<Outcome>[] = [];
  let sent = 0;
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - startedAt) / 1000) * perSecond);
    for (; sent < due; sent++) {
      pending.push(send(origin, agent, next(sent)).then((outcome) => ({ ...outcome, at: outcome.at - startedAt })));
    }
  }, tickMs);
  return {
    async stop() {
      clearInterval(timer);
      const outcomes = await Promise.all(pending);
      agent.destroy();
      return outcomes;
    },
  };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** A line for the test log: how many, how many failed and why, p99 and max latency. */
export function summary(outcomes: Outcome[], failed: (outcome: Outcome) => boolean): string {
  const failures = outcomes.filter(failed);
  const reasons = new Map<string, number>();
  for (const { status, error } of failures) {
    const reason = error ?? String(status);
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const ms = outcomes.map((outcome) => outcome.ms);
  const why = [...reasons].map(([reason, count]) => `${count}x ${reason}`).join(', ');
  return `${outcomes.length} requests, ${failures.length} failed${why ? ` (${why})` : ''}, p99 ${percentile(ms, 99).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms`;
}
