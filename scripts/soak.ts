// `npm run soak`: 60 s of mixed load (80% reads, 20% creates) against the real service, as `npm start`
// runs it (compiled, embedded FerretDB in a fresh DATA_DIR), from autocannon in this process. Prints
// non-2xx responses, p50/p99 latency and the service's RSS at start and end; exits 1 on any non-2xx.
// Knobs: SOAK_SECONDS (60), SOAK_CONNECTIONS (10).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 10);
const START_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 15_000;
const KEY = `soak_${randomBytes(16).toString('hex')}`;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** Starts the compiled service and resolves with its origin once it logs that it listens. */
async function startService(dataDir: string): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    env: { ...process.env, PORT: '0', API_KEYS: KEY, DATA_DIR: dataDir, LOG_LEVEL: 'warn', MONGODB_URI: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const deadline = setTimeout(() => child.kill('SIGKILL'), START_DEADLINE_MS);
  for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) {
    const rest = /"rest":"([^"]+)"/.exec(line)?.[1];
    if (rest) {
      clearTimeout(deadline);
      return { child, origin: new URL(rest).origin };
    }
  }
  throw new Error('the service exited before listening');
}

async function stopService(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  child.kill('SIGTERM');
  const deadline = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
  const code = await exited;
  clearTimeout(deadline);
  return code;
}

const dataDir = mkdtempSync(join(tmpdir(), 'petstore-soak-'));
const { child, origin } = await startService(dataDir);
try {
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const seed = await fetch(`${origin}/v1/pets`, { method: 'POST', headers, body: '{"name":"Seed","categoryId":1}' });
  const seedId = ((await seed.json()) as { id: number }).id;
  const startRss = rssMb(child.pid as number);
  console.log(
    `soak: ${SECONDS} s, ${CONNECTIONS} connections against ${origin} (service pid ${child.pid}, RSS ${startRss} MB)`,
  );
  // Each connection cycles through five requests: four reads and one create.
  const result = await autocannon({
    url: origin,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers,
    requests: [
      { method: 'GET', path: '/v1/pets?limit=20' },
      { method: 'GET', path: `/v1/pets/${seedId}` },
      { method: 'GET', path: '/v1/pets?limit=5&status=available' },
      { method: 'POST', path: '/graphql', body: JSON.stringify({ query: '{ pets(limit: 10) { id name } }' }) },
      { method: 'POST', path: '/v1/pets', body: JSON.stringify({ name: 'Soak', categoryId: 7, status: 'available' }) },
    ],
  });
  const endRss = rssMb(child.pid as number);
  const code = await stopService(child);
  const summary = {
    requests: result.requests.total,
    reqPerSecond: Math.round(result.requests.average),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    rssStartMb: startRss,
    rssEndMb: endRss,
    exitCode: code,
  };
  console.log(JSON.stringify(summary, null, 2));
  process.exitCode = result.non2xx + result.errors + result.timeouts > 0 || code !== 0 ? 1 : 0;
} finally {
  if (child.exitCode === null && child.signalCode === null) await stopService(child);
  rmSync(dataDir, { recursive: true, force: true });
}
