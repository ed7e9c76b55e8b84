// The memory target: RSS of the service process (compiled, with npm start's flags, its embedded
// FerretDB running in another process) idle after 1,000 requests, beside a bare node:http process
// answering the same number of requests: the floor any Node service starts from. Read right after
// the requests and after 30 s idle, the reading judged: V8's memory reducer gives pages back only
// once allocation has been quiet for several seconds (docs/benchmarks.md#memory).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rssMbOf } from '../test/support/process-tree.ts';
import { startServiceProcess } from '../test/support/service-process.ts';

const REQUESTS = 1_000;
const CONCURRENCY = 10;
const JUST_AFTER_MS = 2_000;
const IDLE_MS = 30_000;
export const RSS_BUDGET_MB = 100;

const FLOOR_SERVER = `
  const server = require('node:http').createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('[{"id":1,"name":"x","categoryId":1}]');
  });
  server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ rest: 'http://127.0.0.1:' + server.address().port + '/v1' })));
  process.on('SIGTERM', () => process.exit(0));`;

interface Readings {
  atReady: number;
  justAfter: number;
  idle: number;
}

export interface MemoryResult {
  serviceMb: Readings;
  floorMb: Readings;
}

/** 1,000 requests, 10 at a time: reads, GraphQL and creates, as clients send them. */
async function drive(origin: string, key: string): Promise<void> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const kinds = [
    () => fetch(`${origin}/v1/pets?limit=20`, { headers }),
    () => fetch(`${origin}/v1/pets/1`, { headers }),
    () => fetch(`${origin}/graphql`, { method: 'POST', headers, body: '{"query":"{ pets(limit: 10) { id name } }"}' }),
    () => fetch(`${origin}/v1/pets`, { method: 'POST', headers, body: '{"name":"Mem","categoryId":1}' }),
  ];
  let sent = 0;
  const worker = async () => {
    while (sent < REQUESTS) {
      const kind = kinds[sent++ % kinds.length] as () => Promise<Response>;
      await (await kind()).arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function floorProcess(): Promise<{ origin: string; pid: number; stop(): void }> {
  const child = spawn(process.execPath, ['-e', FLOOR_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()));
    child.once('exit', () => reject(new Error('the floor process exited')));
  });
  const origin = new URL((JSON.parse(line) as { rest: string }).rest).origin;
  return { origin, pid: child.pid as number, stop: () => child.kill('SIGTERM') };
}

export async function measureMemory(): Promise<MemoryResult> {
  const key = `mem_${randomBytes(16).toString('hex')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-bench-mem-'));
  const service = await startServiceProcess({
    env: {
      API_KEYS: key,
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_KEY: '100000',
      RATE_LIMIT_BURST: '100000',
    },
  });
  const floor = await floorProcess();
  try {
    const result: MemoryResult = {
      serviceMb: { atReady: service.rssMb(), justAfter: 0, idle: 0 },
      floorMb: { atReady: rssMbOf(floor.pid), justAfter: 0, idle: 0 },
    };
    await drive(service.origin, key);
    await drive(floor.origin, key);
    await new Promise((settled) => setTimeout(settled, JUST_AFTER_MS));
    result.serviceMb.justAfter = service.rssMb();
    result.floorMb.justAfter = rssMbOf(floor.pid);
    await new Promise((settled) => setTimeout(settled, IDLE_MS - JUST_AFTER_MS));
    result.serviceMb.idle = service.rssMb();
    result.floorMb.idle = rssMbOf(floor.pid);
    return result;
  } finally {
    floor.stop();
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function renderMemory({ serviceMb, floorMb }: MemoryResult): string {
  const verdict = serviceMb.idle <= RSS_BUDGET_MB ? 'within' : 'OVER';
  const row = (name: string, r: Readings) =>
    `  ${name.padEnd(52)}${String(r.atReady).padStart(8)}${String(r.justAfter).padStart(12)}${String(r.idle).padStart(10)}`;
  return [
    `memory: RSS in MB; ${REQUESTS} requests, ${CONCURRENCY} at a time`,
    `  ${''.padEnd(52)}${'at ready'.padStart(8)}${`after +${JUST_AFTER_MS / 1000} s`.padStart(12)}${`idle ${IDLE_MS / 1000} s`.padStart(10)}`,
    row("service (npm start's node flags, embedded FerretDB)", serviceMb),
    row('bare node:http floor', floorMb),
    `  idle service: ${verdict} the ${RSS_BUDGET_MB} MB budget; service / floor when idle ${(serviceMb.idle / floorMb.idle).toFixed(2)}`,
  ].join('\n');
}
