// Debian's HAProxy in front of a fleet, as production runs one: round robin, health checks on
// `GET /ready`, no retries (as an L4 balancer or a Kubernetes Service: a refused connection is a
// failed request). Started and stopped by the test; the kernel kills it if the test process dies.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './free-port.ts';
import { exited, spawnTied } from './tied-process.ts';

const HAPROXY = '/usr/sbin/haproxy';
const START_DEADLINE_MS = 10_000;
const STOP_DEADLINE_MS = 5_000;

export interface BalancerOptions {
  /** Backend servers by name: the port each instance listens on (the same across its restarts). */
  servers: Record<string, number>;
  /** Health-check interval; a server goes DOWN after `fall` failed checks and UP after `rise` passed. */
  checkIntervalMs: number;
  fall?: number;
  rise?: number;
}

export interface Balancer {
  origin: string;
  pid: number;
  /** Each server's state as HAProxy sees it: UP, DOWN, "UP 1/2" (going down), "DOWN 1/2" (going up)... */
  states(): Promise<Record<string, string>>;
  /** Resolves once `server` is in `state`; rejects after `timeoutMs`. */
  waitFor(server: string, state: 'UP' | 'DOWN', timeoutMs?: number): Promise<void>;
  log: string[];
  stop(): Promise<void>;
}

function configuration(dir: string, port: number, options: BalancerOptions): string {
  const { checkIntervalMs, fall = 2, rise = 2 } = options;
  const servers = Object.entries(options.servers).map(
    ([name, serverPort]) => `  server ${name} 127.0.0.1:${serverPort}`,
  );
  return [
    'global',
    `  stats socket ${join(dir, 'admin.sock')} mode 600 level admin`,
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    // The balancer's idle keep-alive to servers is shorter than theirs (KEEP_ALIVE_TIMEOUT_MS, 65 s).
    '  timeout http-keep-alive 10s',
    '  retries 0',
    '  option forwardfor',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend fleet',
    'backend fleet',
    '  balance roundrobin',
    '  option httpchk GET /ready',
    '  http-check expect status 200',
    `  default-server check inter ${checkIntervalMs}ms fall ${fall} rise ${rise}`,
    ...servers,
    '',
  ].join('\n');
}

/** One command on the admin socket; its whole answer. */
function adminCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let answer = '';
    socket.setTimeout(2_000, () => socket.destroy(new Error(`haproxy admin socket: no answer to ${command}`)));
    socket.on('connect', () => socket.write(`${command}\n`));
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** `show stat` is CSV with a `# pxname,svname,...,status,...` header. */
function serverStates(csv: string): Record<string, string> {
  const [header = '', ...rows] = csv.trim().split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const [proxy, server, status] = ['pxname', 'svname', 'status'].map((name) => columns.indexOf(name));
  const states: Record<string, string> = {};
  for (const row of rows) {
    const fields = row.split(',');
    const name = fields[server as number] as string;
    if (fields[proxy as number] === 'fleet' && name !== 'BACKEND') states[name] = fields[status as number] as string;
  }
  return states;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startBalancer(options: BalancerOptions): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-haproxy-'));
  const port = await freePort();
  const configPath = join(dir, 'haproxy.cfg');
  writeFileSync(configPath, configuration(dir, port, options));
  const socketPath = join(dir, 'admin.sock');
  // -db: in the foreground, logging to stderr.
  const child = spawnTied(HAPROXY, ['-db', '-f', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  // Piped (stdio above), so both streams exist.
  for (const stream of [child.stdout, child.stderr])
    createInterface({ input: stream as NodeJS.ReadableStream }).on('line', (line) => log.push(line));

  const states = async () => serverStates(await adminCommand(socketPath, 'show stat'));
  const stop = async () => {
    child.kill('SIGTERM');
    const late = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
    await exited(child);
    clearTimeout(late);
    rmSync(dir, { recursive: true, force: true });
  };

  async function waitFor(server: string, state: 'UP' | 'DOWN', timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = (await states())[server];
      if (current === state) return;
      if (Date.now() > deadline)
        throw new Error(`haproxy: ${server} is ${current}, not ${state}, after ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}):\n${log.join('\n')}`);
    try {
      await states();
      break;
    } catch (error) {
      if (Date.now() - started > START_DEADLINE_MS) {
        await stop();
        throw new Error(
          `haproxy did not answer on its admin socket in ${START_DEADLINE_MS} ms: ${error}\n${log.join('\n')}`,
        );
      }
      await sleep(50);
    }
  }
  return { origin: `http://127.0.0.1:${port}`, pid: child.pid as number, states, waitFor, log, stop };
}

/** A balancer in front of servers that are all UP already: the fleet is ready for traffic. */
export async function startBalancerOnceUp(options: BalancerOptions): Promise<Balancer> {
  const balancer = await startBalancer(options);
  try {
    for (const name of Object.keys(options.servers)) await balancer.waitFor(name, 'UP');
  } catch (error) {
    await balancer.stop();
    throw error;
  }
  return balancer;
}
