import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AttemptRequest,
  attemptDelivery,
  parseRetryAfter,
  RESPONSE_READ_LIMIT_BYTES,
  RETRY_AFTER_CAP_MS,
} from '../src/webhooks/webhook-attempt.ts';
import { signedHeaders } from '../src/webhooks/webhook-message.ts';
import { newSecret } from '../src/webhooks/webhook-store.ts';
import { type Requirement, requiring } from './support/required-tools.ts';
import { type Receiver, startReceiver } from './support/webhook-receiver.ts';

const TIMEOUT_MS = 300;
const BODY = JSON.stringify({ type: 'pet.created', data: { id: 1, name: 'Rex ✓' } });
const KiB = 1024;

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(handler?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(handler);
  receivers.push(started);
  return started;
}

const attempt = (url: string, overrides: Partial<AttemptRequest> = {}) =>
  attemptDelivery({ url, headers: {}, body: BODY, timeoutMs: TIMEOUT_MS, allowPrivate: true, ...overrides });

/** What a failed attempt reports: its latency varies, the rest is exact. */
const failed = (error: string, status: number | null = null) => ({ status, latencyMs: expect.any(Number), error });

const answer =
  (status: number, headers: Record<string, string> = {}) =>
  (_request: unknown, response: ServerResponse) =>
    response.writeHead(status, headers).end();

describe('a delivery attempt to a receiver that answers', () => {
  it('POSTs the body and headers exactly as given, verifiable with Standard Webhooks, on a connection closed after', async () => {
    const secret = newSecret();
    const headers = signedHeaders([{ secret, expiresAt: null }], { webhookId: 'msg_1', body: BODY, now: new Date() });
    const target = await receiver();

    const result = await attempt(`${target.url}hooks/pets?token=t`, { headers });

    expect(result).toEqual({ status: 200, latencyMs: expect.any(Number) });
    const [received] = target.received;
    expect(received?.method).toBe('POST');
    expect(received?.path).toBe('/hooks/pets?token=t');
    expect(received?.body).toBe(BODY);
    expect(received?.headers).toMatchObject({
      ...headers,
      host: `127.0.0.1:${target.port}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(BODY)),
      'user-agent': 'petstore-gateway-webhooks',
    });
    expect(() => new Webhook(secret).verify(received!.body, headers)).not.toThrow();
    await target.allClosed();
  });

  it('reports a 503 with Retry-After in seconds, and a 410 as it is', async () => {
    const busy = await receiver(answer(503, { 'retry-after': '1' }));
    expect(await attempt(busy.url)).toEqual({ status: 503, retryAfterMs: 1_000, latencyMs: expect.any(Number) });
    const gone = await receiver(answer(410));
    expect(await attempt(gone.url)).toEqual({ status: 410, latencyMs: expect.any(Number) });
  });

  it('reads Retry-After as an HTTP-date', async () => {
    const inTwoMinutes = new Date(Date.now() + 120_000).toUTCString();
    const busy = await receiver(answer(429, { 'retry-after': inTwoMinutes }));
    const { status, retryAfterMs } = await attempt(busy.url);
    expect(status).toBe(429);
    expect(retryAfterMs).toBeGreaterThan(115_000);
    expect(retryAfterMs).toBeLessThanOrEqual(120_000);
  });

  it('parses Retry-After capped at a day, a past date as now, and ignores nonsense', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('86401000', now)).toBe(RETRY_AFTER_CAP_MS);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('follows no redirect: the 302 is the result, and its Location gets nothing', async () => {
    const elsewhere = await receiver();
    const redirecting = await receiver(answer(302, { location: elsewhere.url }));
    const result = await attempt(redirecting.url);
    expect(result).toEqual(failed('redirect not followed (302)', 302));
    expect(elsewhere.connections()).toBe(0);
  });
});

describe('a delivery attempt that cannot finish normally', () => {
  it('gives up on a receiver that never answers at the deadline, and closes its connection', async () => {
    const silent = await receiver(() => {});
    const result = await attempt(silent.url);
    expect(result).toEqual(failed('timed out after 0.3 s'));
    expect(result.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(result.latencyMs).toBeLessThan(TIMEOUT_MS + 200);
    await silent.allClosed();
  });

  it('holds the deadline over the body too: a trickling answer keeps its status and times out', async () => {
    const trickling = await receiver((_request, response) => {
      response.writeHead(200, { 'content-length': '1000' });
      const timer = setInterval(() => response.write('x'), 20);
      response.on('close', () => clearInterval(timer));
    });
    const result = await attempt(trickling.url);
    expect(result).toEqual(failed('timed out after 0.3 s', 200));
    expect(result.latencyMs).toBeLessThan(TIMEOUT_MS + 200);
  });

  it('reads at most about 64 KiB of a 10 MB answer, then cuts it', async () => {
    const chunk = Buffer.alloc(16 * KiB, 'x');
    let writtenBeforeClose = 0;
    const flooding = await receiver((_request, response) => {
      response.writeHead(200, { 'content-length': String(10 * 1024 * KiB) });
      // Paced, so the kernel's buffers stay nearly empty and what was written is about what was read.
      const timer = setInterval(() => {
        response.write(chunk);
        writtenBeforeClose += chunk.byteLength;
      }, 2);
      response.on('close', () => clearInterval(timer));
    });
    const result = await attempt(flooding.url, { timeoutMs: 5_000 });
    expect(result).toEqual({ status: 200, latencyMs: expect.any(Number) });
    expect(result.latencyMs).toBeLessThan(1_000);
    await flooding.allClosed();
    expect(writtenBeforeClose).toBeGreaterThanOrEqual(RESPONSE_READ_LIMIT_BYTES);
    expect(writtenBeforeClose).toBeLessThan(RESPONSE_READ_LIMIT_BYTES + 256 * KiB);
  });

  it('reports a connection closed mid-body, keeping the status', async () => {
    const cut = await receiver((_request, response) => {
      response.writeHead(200, { 'content-length': '1000' });
      response.write('0123456789', () => response.socket?.end());
    });
    expect(await attempt(cut.url)).toEqual(failed('closed mid-response', 200));
  });

  it('reports a refused connection', async () => {
    const closed = await receiver();
    await closed.close();
    expect(await attempt(closed.url)).toEqual(failed('connection refused'));
  });

  it('stops when the caller cancels', async () => {
    const silent = await receiver(() => {});
    const result = await attempt(silent.url, { signal: AbortSignal.timeout(50), timeoutMs: 5_000 });
    expect(result).toEqual(failed('cancelled'));
    await silent.allClosed();
  });
});

describe('a delivery attempt to a private address without allowPrivate', () => {
  it.each([
    ['a literal 127.0.0.1', '127.0.0.1', /^the host is a loopback address \(127\.0\.0\.1\)$/],
    ['localhost, a name that resolves to loopback', 'localhost', /^localhost resolves to a loopback address \(/],
  ])('refuses %s before any socket opens', async (_, host, error) => {
    const target = await receiver();
    const refused = await attempt(`http://${host}:${target.port}/`, { allowPrivate: false });
    expect(refused).toEqual({ status: null, latencyMs: expect.any(Number), error: expect.stringMatching(error) });
    expect(target.connections()).toBe(0);
    // The count works: the same receiver, allowed, sees its one connection.
    expect(await attempt(target.url)).toMatchObject({ status: 200 });
    expect(target.connections()).toBe(1);
  });
});

const OPENSSL: Requirement = {
  present: () => existsSync('/usr/bin/openssl'),
  missing: '/usr/bin/openssl missing',
  fix: 'apt-get install -y openssl',
};
const tls = requiring(OPENSSL);

describe.skipIf(tls.skip)(tls.title('a delivery attempt over https'), () => {
  it('sends the name as SNI and verifies the certificate: a self-signed one is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    execFileSync('/usr/bin/openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
      ...['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost', '-keyout', key, '-out', cert],
    ]);
    const context = createSecureContext({ key: readFileSync(key), cert: readFileSync(cert) });
    rmSync(dir, { recursive: true, force: true });
    const serverNames: string[] = [];
    const server = createHttpsServer({
      SNICallback: (name, done) => {
        serverNames.push(name);
        done(null, context);
      },
    });
    // Where this machine's first answer for localhost is, which is where the attempt connects.
    await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
    try {
      const { port } = server.address() as { port: number };
      const result = await attempt(`https://localhost:${port}/`);
      expect(result).toEqual(failed('request failed (DEPTH_ZERO_SELF_SIGNED_CERT)'));
      expect(serverNames).toEqual(['localhost']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
