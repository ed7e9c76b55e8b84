import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ACCESS_LINES_HELD_BACK, createAccessLog } from '../src/edge/access-log.ts';
import type { Exchange } from '../src/http/exchange.ts';
import { createLogger, LOG_BATCH_BYTES, LOG_BATCH_INTERVAL_MS } from '../src/logger.ts';
import { capturingLogger, type LogLine, linesDuring } from './support/capturing-logger.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const { logger, lines } = capturingLogger();
const server = useTestServer({ logger });

/** The parts of a request the access log reads, as the edge would hold them. */
function exchangeOf(url: string, status: number, finished: boolean, extra: Partial<Exchange> = {}): Exchange {
  return {
    req: { method: 'GET', url } as IncomingMessage,
    res: { statusCode: status, writableFinished: finished } as ServerResponse,
    id: 'req-1',
    startedAt: performance.now() - 1.25,
    keyId: '',
    documentId: '',
    clientAddress: '',
    ...extra,
  } as Exchange;
}

/** Everything but the clock and the duration, which differ between two lines by nature. */
const withoutTimes = ({ time, ms, ...rest }: Record<string, unknown>): Record<string, unknown> => ({
  ...rest,
  time: typeof time,
  ms: typeof ms,
});

const directory = mkdtempSync(join(tmpdir(), 'access-log-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const linesOf = (file: string): LogLine[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogLine);

/** The service's logger (createLogger) into a file of its own; `written` flushes its batch and reads it. */
function fileLogger(name = `${randomUUID()}.log`) {
  const file = join(directory, name);
  const logger = createLogger('info', file);
  const written = (): LogLine[] => {
    logger.flush();
    return linesOf(file);
  };
  return { logger, file, written };
}

/** Where the access log goes: the service's own batch (lines built as bytes) and any other (pino writes them). */
const DESTINATIONS = [
  ["the service's own batch", () => fileLogger()],
  [
    'another pino destination',
    () => {
      const { logger, lines } = capturingLogger();
      return { logger, written: () => lines };
    },
  ],
] as const;

describe('the access log', () => {
  it('writes one line per request on the real service: level, time, request id, method, URL, status, ms, key', async () => {
    const { logged, requestId } = await linesDuring(lines, () => server.request.get('/v1/pets?limit=2').set(AUTH));
    const accessLines = logged.filter((line) => line.reqId === requestId && line.msg === 'request');
    expect(accessLines).toEqual([
      expect.objectContaining({
        level: 30,
        time: expect.any(Number),
        method: 'GET',
        url: '/v1/pets?limit=2',
        status: 200,
        ms: expect.any(Number),
        keyId: expect.any(String),
      }),
    ]);
    expect(accessLines[0]?.ms).toBeGreaterThanOrEqual(0);
  });

  it('writes a GraphQL GET without its query string: the document and its variables never reach the log', async () => {
    const secret = 'Secret-Name-7Qz';
    const query = encodeURIComponent(`query Find($name: String) { pets(limit: 1) { id name } } # ${secret}`);
    const variables = encodeURIComponent(JSON.stringify({ name: secret }));
    const { logged, requestId, response } = await linesDuring(lines, () =>
      server.request.get(`/graphql?query=${query}&variables=${variables}`).set(AUTH),
    );
    expect(response.status).toBe(200);
    const accessLines = logged.filter((line) => line.reqId === requestId && line.msg === 'request');
    expect(accessLines).toEqual([expect.objectContaining({ method: 'GET', url: '/graphql', status: 200 })]);
    expect(JSON.stringify(logged)).not.toContain(secret);
    // Under the edge's own answers too (a 401 before anything runs), and for a query string with no document.
    const refused = await linesDuring(lines, () => server.request.get(`/graphql?query=${query}`));
    expect(refused.response.status).toBe(401);
    expect(refused.logged.find((line) => line.reqId === refused.requestId && line.msg === 'request')?.url).toBe(
      '/graphql',
    );
    expect(JSON.stringify(refused.logged)).not.toContain(secret);
  });

  it('keeps the document id of a GraphQL request, and a REST URL whole', () => {
    const { logger: own, lines: written } = capturingLogger();
    const log = createAccessLog(own);
    const documentId = `sha256:${'b'.repeat(64)}`;
    const graphql = exchangeOf(`/graphql?documentId=${documentId}&variables=%7B%7D`, 200, true, {
      face: 'graphql',
      path: '/graphql',
      documentId,
    });
    log(graphql, performance.now());
    log(exchangeOf('/v1/pets?limit=2&status=sold', 200, true), performance.now());
    expect(written.map(({ url, documentId }) => ({ url, documentId }))).toEqual([
      { url: '/graphql', documentId },
      { url: '/v1/pets?limit=2&status=sold', documentId: undefined },
    ]);
  });

  it.each(DESTINATIONS)('writes the line pino would write for the same fields, into %s', (_into, open) => {
    const exchanges = [
      exchangeOf('/v1/pets/7', 200, true, { keyId: 'k1' }),
      exchangeOf('/v1/pets/"x"\\y?name=Rex%20ü\u2028', 404, true),
      exchangeOf('/graphql', 200, true, { keyId: 'k2', documentId: `sha256:${'a'.repeat(64)}` }),
      exchangeOf('/v1/pets', 401, true, { clientAddress: '203.0.113.7' }),
      exchangeOf('/graphql', 429, true, { keyId: 'k3', clientAddress: '2001:db8::1' }),
      exchangeOf('/v1/pets', 200, false),
    ];
    const { logger: own, written } = open();
    const accessLog = createAccessLog(own);
    for (const exchange of exchanges) {
      accessLog(exchange, performance.now());
      own.flush();
      own.info(
        {
          reqId: exchange.id,
          method: exchange.req.method,
          url: exchange.req.url,
          status: exchange.res.writableFinished ? exchange.res.statusCode : undefined,
          ms: 1.3,
          keyId: exchange.keyId || undefined,
          documentId: exchange.documentId || undefined,
          clientAddress: exchange.clientAddress || undefined,
        },
        exchange.res.writableFinished ? 'request' : 'client closed the connection before the response',
      );
    }
    const lines = written();
    expect(lines).toHaveLength(2 * exchanges.length);
    for (let index = 0; index < lines.length; index += 2) {
      const [ours, pinos] = [lines[index], lines[index + 1]] as [LogLine, LogLine];
      expect(withoutTimes(ours)).toEqual(withoutTimes(pinos));
      // Same keys in the same order, so a reader of the raw lines sees no difference either.
      expect(Object.keys(ours)).toEqual(Object.keys(pinos));
      expect(Math.abs((ours.time as number) - (pinos.time as number))).toBeLessThan(1_000);
    }
  });

  it("builds the line itself into the service's own batch, and leaves any other destination to pino", () => {
    const { logger: service, written } = fileLogger('built.log');
    const { logger: other, lines: captured } = capturingLogger();
    const [serviceInfo, otherInfo] = [vi.spyOn(service, 'info'), vi.spyOn(other, 'info')];
    createAccessLog(service)(exchangeOf('/v1/pets', 200, true), performance.now());
    createAccessLog(other)(exchangeOf('/v1/pets', 200, true), performance.now());
    service.flush();
    expect(serviceInfo).not.toHaveBeenCalled();
    expect(otherInfo).toHaveBeenCalledTimes(1);
    expect([written()[0]?.url, captured[0]?.url]).toEqual(['/v1/pets', '/v1/pets']);
  });

  it('names the client address on 401 and 429 lines only: a key-guessing run can be traced to its source', async () => {
    const wrong = await linesDuring(lines, () => server.request.get('/v1/pets').set({ Authorization: 'Bearer wrong' }));
    const missing = await linesDuring(lines, () => server.request.get('/v1/pets'));
    const served = await linesDuring(lines, () => server.request.get('/v1/pets?limit=1').set(AUTH));
    const accessLine = ({ logged, requestId }: Awaited<typeof served>) =>
      logged.find((line) => line.reqId === requestId && line.msg === 'request');
    for (const refused of [wrong, missing]) {
      expect(accessLine(refused)).toMatchObject({ status: 401, clientAddress: expect.stringMatching(/127\.0\.0\.1$/) });
    }
    expect(accessLine(served)).toMatchObject({ status: 200 });
    expect(accessLine(served)).not.toHaveProperty('clientAddress');
    // A 200 or 404 exchange that knows its address still leaves it out.
    const { logger: own, lines: written } = capturingLogger();
    createAccessLog(own)(exchangeOf('/v1/nowhere', 404, true, { clientAddress: '203.0.113.7' }), performance.now());
    expect(written[0]).not.toHaveProperty('clientAddress');
  });

  it('says when the client left before its answer, without a status', () => {
    const { logger: own, lines: written } = capturingLogger();
    createAccessLog(own)(exchangeOf('/v1/pets', 200, false), performance.now());
    expect(written).toEqual([
      expect.objectContaining({
        level: 30,
        reqId: 'req-1',
        url: '/v1/pets',
        msg: 'client closed the connection before the response',
      }),
    ]);
    expect(written[0]).not.toHaveProperty('status');
  });

  it.each(DESTINATIONS)(
    'carries the trace ids it is given, after the bindings, as pino would, into %s',
    (_into, open) => {
      const { logger: own, written } = open();
      const trace = { trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16), trace_flags: '01' };
      createAccessLog(own)(exchangeOf('/v1/pets', 200, true), performance.now(), trace);
      own.flush();
      own.info({ ...trace, reqId: 'req-1', method: 'GET', url: '/v1/pets', status: 200, ms: 1.3 }, 'request');
      const [ours, pinos] = written() as [LogLine, LogLine];
      expect(ours).toEqual(expect.objectContaining({ ...trace, reqId: 'req-1', status: 200 }));
      expect(withoutTimes(ours)).toEqual(withoutTimes(pinos));
      expect(Object.keys(ours)).toEqual(Object.keys(pinos));
    },
  );

  it('writes nothing when the logger is above info', () => {
    const { logger: quiet, lines: written } = capturingLogger('warn');
    createAccessLog(quiet)(exchangeOf('/v1/pets', 200, true), performance.now());
    expect(written).toEqual([]);
  });
});

describe("the access log into the service's own destination, lines built together", () => {
  it("keeps every line in its place among the logger's others, each the line pino would write", async () => {
    const file = join(directory, 'order.log');
    const logger = createLogger('info', file);
    const accessLog = createAccessLog(logger);
    // Three times as many requests as are held back, with other lines between them at odd moments.
    const requests = ACCESS_LINES_HELD_BACK * 3;
    const expected: string[] = [];
    for (let n = 0; n < requests; n++) {
      accessLog(exchangeOf(`/v1/pets/${n}`, 200, true, { id: `req-${n}`, keyId: 'k1' }), performance.now());
      expected.push(`request ${n}`);
      if (n % 7 === 3) {
        logger.warn({ n }, 'between');
        expected.push(`between ${n}`);
      }
    }
    await expect.poll(() => linesOf(file).length, { timeout: 2_000, interval: 10 }).toBe(expected.length);
    const lines = linesOf(file);
    expect(
      lines.map((line) => `${line.msg} ${line.msg === 'request' ? Number(String(line.url).slice(9)) : line.n}`),
    ).toEqual(expected);
    const { lines: pinos, logger: pino } = capturingLogger();
    pino.info({ reqId: 'req-5', method: 'GET', url: '/v1/pets/5', status: 200, ms: 1.3, keyId: 'k1' }, 'request');
    const fifth = lines.find((line) => line.reqId === 'req-5') as LogLine;
    // The file's logger has its own bindings (service); pino's test logger has pid and hostname.
    const { service, ...fifthWithoutBindings } = withoutTimes(fifth);
    const { pid, hostname, ...pinoWithoutBindings } = withoutTimes(pinos[0] as LogLine);
    expect(service).toBe('petstore-gateway');
    expect(fifthWithoutBindings).toEqual(pinoWithoutBindings);
  });

  it("writes a lone request's line within the batch interval, with no request after it", async () => {
    const file = join(directory, 'lone.log');
    const accessLog = createAccessLog(createLogger('info', file));
    const started = performance.now();
    accessLog(exchangeOf('/v1/pets/1', 200, true), performance.now());
    await expect.poll(() => linesOf(file).length, { timeout: 2_000, interval: 10 }).toBe(1);
    expect(performance.now() - started).toBeLessThan(LOG_BATCH_INTERVAL_MS + 1_000);
  });

  it('writes a URL longer than a whole batch, in escapes and wide characters, whole', async () => {
    const file = join(directory, 'long.log');
    const accessLog = createAccessLog(createLogger('info', file));
    const url = `/v1/pets?name=${'ü"\\\u0001€'.repeat(LOG_BATCH_BYTES / 8)}`;
    accessLog(exchangeOf('/v1/pets/1', 200, true), performance.now());
    accessLog(exchangeOf(url, 400, true), performance.now());
    accessLog(exchangeOf('/v1/pets/3', 200, true), performance.now());
    await expect.poll(() => linesOf(file).length, { timeout: 2_000, interval: 10 }).toBe(3);
    expect(linesOf(file).map((line) => line.url)).toEqual(['/v1/pets/1', url, '/v1/pets/3']);
  });

  it('leaves no line behind when the process ends straight after its requests', async () => {
    // The built modules in plain node, as `npm start` runs them.
    const built = (path: string) => JSON.stringify(new URL(`../dist/${path}`, import.meta.url).href);
    const script = [
      `const { createLogger } = await import(${built('logger.js')});`,
      `const { createAccessLog } = await import(${built('edge/access-log.js')});`,
      "const accessLog = createAccessLog(createLogger('info'));",
      'for (let n = 0; n < 5; n++) {',
      "  accessLog({ req: { method: 'GET', url: '/v1/pets/' + n }, res: { statusCode: 200, writableFinished: true },",
      "    id: 'req-' + n, startedAt: performance.now(), keyId: '', documentId: '' }, performance.now());",
      '}',
    ].join('\n');
    const run = promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 });
    const lines = (await run).stdout.split('\n').filter(Boolean);
    expect(lines.map((line) => (JSON.parse(line) as LogLine).reqId)).toEqual([
      'req-0',
      'req-1',
      'req-2',
      'req-3',
      'req-4',
    ]);
  });
});
