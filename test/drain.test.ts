import { Agent, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import { AUTH, uniqueDbName, useTestServer } from './support/test-server.ts';

interface Outcome {
  status?: number;
  connection?: string;
  error?: string;
}

/** One GET on a keep-alive agent; never rejects, so a reset is counted rather than thrown. */
function get(origin: string, agent: Agent, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(`${origin}${path}`, { agent, headers: AUTH }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end();
  });
}

/** The compiled service, as npm start runs it, on the run's database; resolves once it listens. */
function startService(env: Record<string, string> = {}) {
  return startServiceOnRunDatabase({
    dbName: uniqueDbName('drain'),
    echo: 'stderr',
    env: { ...env, RATE_LIMIT_PER_KEY: '100000', RATE_LIMIT_BURST: '100000' },
  });
}

describe('draining on SIGTERM', () => {
  it('when keep-alive clients are busy at the signal, then in-flight requests finish, none is reset, and it exits 0', {
    timeout: 60_000,
  }, async () => {
    const service = await startService();
    const { origin } = service;
    const clients = Array.from({ length: 4 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const outcomes: Outcome[] = [];
    // Each client loops until a request fails: after the drain, its connection is closed by the
    // service's own `Connection: close` and the next dial is refused by the stopped listener.
    const loops = clients.map(async (agent) => {
      for (;;) {
        const outcome = await get(origin, agent, '/v1/pets?limit=5');
        outcomes.push(outcome);
        if (outcome.error) return;
      }
    });

    // A create whose body is still arriving when the signal comes: it must get its whole 201.
    const slowCreate = new Promise<{ status?: number; connection?: string; body: string }>((resolve, reject) => {
      const req = request(`${origin}/v1/pets`, {
        method: 'POST',
        agent: new Agent({ keepAlive: true }),
        headers: { ...AUTH, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body }));
      });
      req.on('error', reject);
      req.write('{"name":"Draining",');
      setTimeout(() => req.end('"categoryId":1}'), 700);
    });

    await new Promise((settled) => setTimeout(settled, 400));
    const signalAt = performance.now();
    const answeredBeforeSignal = outcomes.length;
    const code = await service.stop('SIGTERM');
    const exitMs = performance.now() - signalAt;
    await Promise.all(loops);
    const created = await slowCreate;

    expect(answeredBeforeSignal).toBeGreaterThan(0);
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(10_000);
    expect(created.status).toBe(201);
    expect(created.connection).toBe('close');
    expect(JSON.parse(created.body)).toMatchObject({ name: 'Draining', categoryId: 1 });
    // Every request was answered whole; once draining, answers told the client to close, and a
    // client that then dialled again found the listener gone (refused): never a reset.
    const failures = outcomes.filter(({ error }) => error !== undefined);
    expect(failures).toEqual(clients.map(() => ({ error: 'ECONNREFUSED' })));
    const answered = outcomes.filter(({ error }) => error === undefined);
    expect(answered.every(({ status }) => status === 200)).toBe(true);
    expect(answered.filter(({ connection }) => connection === 'close')).toHaveLength(clients.length);
    for (const agent of clients) agent.destroy();
  });
});

describe('the shutdown delay (SHUTDOWN_DELAY_MS), for balancers that check /ready', () => {
  it('when SIGTERM comes, then /ready says 503 at once while new connections are still served, and the drain starts after the delay', {
    timeout: 60_000,
  }, async () => {
    const delayMs = 1_500;
    const service = await startService({ SHUTDOWN_DELAY_MS: String(delayMs) });
    const { origin } = service;
    const exited = new Promise<number | null>((done) => service.child.once('exit', (code) => done(code)));
    const signalAt = performance.now();
    service.child.kill('SIGTERM');
    await expect.poll(async () => (await fetch(`${origin}/ready`)).status, { interval: 50 }).toBe(503);
    // A new connection, as a balancer that has not yet seen the 503 would open: still served.
    const agent = new Agent({ keepAlive: false });
    const during = await get(origin, agent, '/v1/pets?limit=1');
    const servedAt = performance.now() - signalAt;
    expect(during).toEqual({ status: 200, connection: 'close' });
    expect(servedAt).toBeLessThan(delayMs);
    expect(await exited).toBe(0);
    expect(performance.now() - signalAt).toBeGreaterThanOrEqual(delayMs);
    agent.destroy();
  });
});

describe('a draining service', () => {
  const server = useTestServer();

  it('answers /ready with 503 and tells every client to close its connection', async () => {
    server.service.drain();
    const ready = await fetch(`${server.baseUrl}/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('connection')).toBe('close');
    const listed = await fetch(`${server.baseUrl}/v1/pets`, { headers: AUTH });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('connection')).toBe('close');
    expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
  });
});
