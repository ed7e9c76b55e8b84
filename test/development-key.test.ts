// The development key of `npm start`: made only where nobody else can use it, and shown in GraphiQL
// only to a browser on this machine. Each case starts the compiled service as a newcomer would.
import { connect } from 'node:net';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { connectDatabase } from '../src/db/mongo.ts';
import { rawRequest } from './support/raw-http.ts';
import { startServiceOnRunDatabase } from './support/service-on-run-database.ts';
import { logEntries, type ServiceProcess } from './support/service-process.ts';
import { uniqueDbName } from './support/test-server.ts';

const services = new Set<ServiceProcess>();
afterEach(async () => {
  for (const service of services) await service.stop();
  services.clear();
});

/** `npm start`'s service with no API_KEYS, on a database of its own (no issued key unless given). */
async function startWithoutKeys(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const service = await startServiceOnRunDatabase({ dbName: uniqueDbName('devkey'), env: { API_KEYS: '', ...env } });
  services.add(service);
  return service;
}

const portOf = (service: ServiceProcess) => new URL(service.origin).port;

/** The key the service logged as generated, if it did. */
const generatedKey = (service: ServiceProcess) =>
  logEntries<{ msg: string; apiKey?: string }>(service.log).find((line) => line.apiKey !== undefined)?.apiKey;

/** The two pages that may hold the key: GraphiQL and the REST reference (Swagger UI). */
const PAGES = ['/graphql', '/v1/docs'] as const;
type PagePath = (typeof PAGES)[number];

/** A page as a browser asks for it, sent to the service's port with this Host header. */
async function pageFor(service: ServiceProcess, path: PagePath, host: string, headers: Record<string, string> = {}) {
  const response = await rawRequest(`http://127.0.0.1:${portOf(service)}${path}`, {
    headers: { Accept: 'text/html', Host: host, ...headers },
  });
  return { status: response.status, cacheControl: response.headers['cache-control'], page: response.body.toString() };
}

/** How each page says it holds no key: GraphiQL shows how to set one; the REST reference authorizes nothing. */
const holdsNoKey = (path: PagePath, page: string) =>
  path === '/graphql'
    ? page.includes('class="key-hint"')
    : page.includes('id="api-docs-config"') && !page.includes('"authorize"');

/** The same request over HTTP/1.0, as nginx's proxy_pass sends it by default. */
function pageOverHttp10(service: ServiceProcess, path: PagePath, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(portOf(service)), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(`GET ${path} HTTP/1.0\r\nHost: ${host}\r\nAccept: text/html\r\n\r\n`);
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

  it('then GraphiQL and the REST reference asked for as localhost, 127.x or [::1] hold it, on pages never stored', async () => {
    const service = await startWithoutKeys();
    const key = generatedKey(service) as string;
    for (const path of PAGES) {
      for (const host of [
        `localhost:${portOf(service)}`,
        'LOCALHOST',
        `127.0.0.1:${portOf(service)}`,
        '127.1.2.3',
        '[::1]:80',
      ]) {
        const { status, cacheControl, page } = await pageFor(service, path, host);
        expect(status, `${path} ${host}`).toBe(200);
        expect(page, `${path} ${host}`).toContain(path === '/graphql' ? `Bearer ${key}` : `"key":"${key}"`);
        expect(cacheControl, `${path} ${host}`).toBe('no-store');
      }
    }
  });

  it.each(PAGES)(
    'then %s asked for by another name, through a proxy or over HTTP/1.0 does not hold it',
    async (path) => {
      const service = await startWithoutKeys();
      const key = generatedKey(service) as string;
      const local = `localhost:${portOf(service)}`;
      const withoutKey = [
        // DNS rebinding: a name of the attacker's resolved to 127.0.0.1; a reverse proxy passing Host on.
        await pageFor(service, path, 'evil.example'),
        await pageFor(service, path, `evil.example:${portOf(service)}`),
        await pageFor(service, path, 'localhost.evil.example'),
        await pageFor(service, path, '127.0.0.1.evil.example'),
        await pageFor(service, path, '[::1].evil.example'),
        // A proxy on this host that rewrites Host to the upstream's still says it forwarded.
        await pageFor(service, path, local, { 'X-Forwarded-For': '203.0.113.9' }),
        await pageFor(service, path, local, { Forwarded: 'for=203.0.113.9' }),
        await pageFor(service, path, local, { Via: '1.1 proxy' }),
        await pageFor(service, path, local, { 'X-Real-IP': '203.0.113.9' }),
      ];
      for (const { status, page, cacheControl } of withoutKey) {
        expect(status).toBe(200);
        expect(page).not.toContain(key);
        expect(holdsNoKey(path, page)).toBe(true);
        expect(cacheControl).toBe('no-cache');
      }
      const http10 = await pageOverHttp10(service, path, local);
      expect(http10).toMatch(/^HTTP\/1\.1 200/);
      expect(http10).not.toContain(key);
    },
  );

  it('when the service listens on 0.0.0.0, then no key is generated and GraphiQL holds none', async () => {
    const service = await startWithoutKeys({ HOST: '0.0.0.0' });
    expect(generatedKey(service)).toBeUndefined();
    expect(service.log.join('\n')).not.toContain('dev_');
    const messages = logEntries(service.log).map((line) => line.msg);
    expect(messages).toContain('no development key: HOST is not a loopback address');
    expect(messages).toContain(
      'no API key can authenticate: set API_KEYS, or issue one with `npm run keys -- create NAME`',
    );
    for (const path of PAGES) {
      const { page } = await pageFor(service, path, `localhost:${portOf(service)}`);
      expect(holdsNoKey(path, page), path).toBe(true);
    }
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
    for (const path of PAGES) {
      const { page } = await pageFor(service, path, `localhost:${portOf(service)}`);
      expect(holdsNoKey(path, page), path).toBe(true);
    }
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
