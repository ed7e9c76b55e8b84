// `npm run soak`: 60 s of mixed load (80% reads, 20% creates) against the real service, as `npm start`
// runs it (compiled, embedded FerretDB in a fresh DATA_DIR), from autocannon in this process. Prints
// non-2xx responses, p50/p99 latency and the service's RSS at start and end; exits 1 on any non-2xx.
// Knobs: SOAK_SECONDS (60), SOAK_CONNECTIONS (10).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startServiceProcess } from '../test/support/service-process.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 10);
const KEY = `soak_${randomBytes(16).toString('hex')}`;

const dataDir = mkdtempSync(join(tmpdir(), 'petstore-soak-'));
// One key stands for many clients here, so its rate limit is raised; every other limit is as shipped.
const service = await startServiceProcess({
  env: {
    API_KEYS: KEY,
    DATA_DIR: dataDir,
    RATE_LIMIT_PER_KEY: '100000',
    RATE_LIMIT_BURST: '100000',
  },
});
const { child, origin } = service;
try {
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const seed = await fetch(`${origin}/v1/pets`, { method: 'POST', headers, body: '{"name":"Seed","categoryId":1}' });
  const seedId = ((await seed.json()) as { id: number }).id;
  const startRss = service.rssMb();
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
  const endRss = service.rssMb();
  const code = await service.stop();
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
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
