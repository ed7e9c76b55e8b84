// The development key of `npm start`: made only where nobody else can use it, and shown in GraphiQL
// only to a browser on this machine. Each case starts the compiled service as a newcomer would.
import { connect } from 'node:net';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { logEntries, type ServiceProcess, startServiceProcess } from '../scripts/service-process.ts';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { connectDatabase } from '../src/db/mongo.ts';
import { rawRequest } from './support/raw-http.ts';
import { uniqueDbName } from './support/test-server.ts';

const services = new Set<ServiceProcess>();
afterEach(async () => {
  for (const service of services) await service.stop();
  services.clear();
});

/** `npm start`'s service with no API_KEYS, on a database of its own (no issued key unless given). */
async function startWithoutKeys(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const service = await startServiceProcess({
    via: 'node',
    echo: 'none',
    env: { API_KEYS: '', MONGODB_URI: inject('mongoUri'), MONGODB_DB: uniqueDbName('devkey'), ...env },
  });
  services.add(service);
  return service;
}

const portOf = (service: ServiceProcess) => new URL(service.origin).port;

/** The key the service logged as generated, if it did. */
const generatedKey = (service: ServiceProcess) =>
  logEntries<{ msg: string; apiKey?: string }>(service.log).find((line) => line.apiKey !== undefined)?.apiKey;

/** GraphiQL as a browser asks for it, sent to the service's port with this Host header. */
async function graphiqlFor(service: ServiceProcess, host: string, headers: Record<string, string> = {}) {
  const response = await rawRequest(`http://127.0.0.1:${portOf(service)}/graphql`, {
    headers: { Accept: 'text/html', Host: host, ...headers },
  });
  return { status: response.status, cacheControl: response.headers['cache-control'], page: response.body.toString() };
}

/** The same request over HTTP/1.0, as nginx's proxy_pass sends it by default. */
function graphiqlOverHttp10(service: ServiceProcess, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(portOf(service)), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(`GET /graphql HTTP/1.0\r\nHost: ${host}\r\nAccept: text/html\r\n\r\n`);
  });
}

describe('the development key', () => {
  it('when a newcomer starts on loopback with no key at all, then one key is generated, logged once, and works', async () => {
    const service = await startWithoutKeys();
    const key = generatedKey(service);
    expect(key).toMatch(/^dev_[A-Za-z0-9_-]{32}$/);
    expect(service.log.filter((line) => line.includes(key as string))).toHaveLength(1);
    const listed = await fetch(`${service.origin}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } });
    expect(listed.status).toBe(200);
  });

  it('then GraphiQL asked for as localhost, 127.x or [::1] holds it, on a page never stored', async () => {
    const service = await startWithoutKeys();
    const key = generatedKey(service) as string;
    for (const host of [
      `localhost:${portOf(service)}`,
      'LOCALHOST',
      `127.0.0.1:${portOf(service)}`,
      '127.1.2.3',
      '[::1]:80',
    ]) {
      const { status, cacheControl, page } = await graphiqlFor(service, host);
      expect(status, host).toBe(200);
      expect(page, host).toContain(`Bearer ${key}`);
      expect(cacheControl, host).toBe('no-store');
    }
  });

  it('then GraphiQL asked for by another name, through a proxy or over HTTP/1.0 does not hold it', async () => {
    const service = await startWithoutKeys();
    const key = generatedKey(service) as string;
    const local = `localhost:${portOf(service)}`;
    const withoutKey = [
      // DNS rebinding: a name of the attacker's resolved to 127.0.0.1; a reverse proxy passing Host on.
      await graphiqlFor(service, 'evil.example'),
      await graphiqlFor(service, `evil.example:${portOf(service)}`),
      await graphiqlFor(service, 'localhost.evil.example'),
      await graphiqlFor(service, '127.0.0.1.evil.example'),
      await graphiqlFor(service, '[::1].evil.example'),
      // A proxy on this host that rewrites Host to the upstream's still says it forwarded.
      await graphiqlFor(service, local, { 'X-Forwarded-For': '203.0.113.9' }),
      await graphiqlFor(service, local, { Forwarded: 'for=203.0.113.9' }),
      await graphiqlFor(service, local, { Via: '1.1 proxy' }),
      await graphiqlFor(service, local, { 'X-Real-IP': '203.0.113.9' }),
    ];
    for (const { status, page, cacheControl } of withoutKey) {
      expect(status).toBe(200);
      expect(page).not.toContain(key);
      expect(page).toContain('class="key-hint"');
      expect(cacheControl).toBe('no-cache');
    }
    const http10 = await graphiqlOverHttp10(service, local);
    expect(http10).toMatch(/^HTTP\/1\.1 200/);
    expect(http10).not.toContain(key);
  });

  it('when the service listens on 0.0.0.0, then no key is generated and GraphiQL holds none', async () => {
    const service = await startWithoutKeys({ HOST: '0.0.0.0' });
    expect(generatedKey(service)).toBeUndefined();
    expect(service.log.join('\n')).not.toContain('dev_');
    const messages = logEntries(service.log).map((line) => line.msg);
    expect(messages).toContain('no development key: HOST is not a loopback address');
    expect(messages).toContain(
      'no API key can authenticate: set API_KEYS, or issue one with `npm run keys -- create NAME`',
    );
    const { page } = await graphiqlFor(service, `localhost:${portOf(service)}`);
    expect(page).toContain('class="key-hint"');
    expect((await fetch(`http://127.0.0.1:${portOf(service)}/v1/pets`)).status).toBe(401);
  });

  it('when an issued key exists, then no key is generated and the issued key is the way in', async () => {
    const dbName = uniqueDbName('devkey-issued');
    const database = await connectDatabase(inject('mongoUri'), dbName);
    const { key: issued } = await createApiKeyStore(database.db).issue({ name: 'operator' });
    await database.close();
    const service = await startWithoutKeys({ MONGODB_DB: dbName });
    expect(generatedKey(service)).toBeUndefined();
    expect(service.log.join('\n')).not.toContain('dev_');
    const { page } = await graphiqlFor(service, `localhost:${portOf(service)}`);
    expect(page).toContain('class="key-hint"');
    expect((await fetch(`${service.origin}/v1/pets`, { headers: { Authorization: `Bearer ${issued}` } })).status).toBe(
      200,
    );
  });

  it('when only an expired or revoked key was issued, then a development key is generated all the same', async () => {
    const dbName = uniqueDbName('devkey-stale');
    const database = await connectDatabase(inject('mongoUri'), dbName);
    const store = createApiKeyStore(database.db);
    const day = 86_400_000;
    await store.issue({ name: 'expired', expiresInDays: 1, now: new Date(Date.now() - 2 * day) });
    const { record } = await store.issue({ name: 'revoked' });
    await store.revoke(record.id);
    await database.close();
    const service = await startWithoutKeys({ MONGODB_DB: dbName });
    expect(generatedKey(service)).toMatch(/^dev_/);
  });
});
