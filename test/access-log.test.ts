import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_LINES_HELD_BACK, createAccessLog } from '../src/edge/access-log.ts';
import type { RequestScope } from '../src/http/request-scope.ts';
import { createLogger, LOG_BATCH_BYTES, LOG_BATCH_INTERVAL_MS } from '../src/logger.ts';
import { capturingLogger, type LogLine, linesDuring } from './support/capturing-logger.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

const { logger, lines } = capturingLogger();
const server = useTestServer({ logger });

/** The parts of a request the access log reads, as the edge would hold them. */
function scopeOf(url: string, status: number, finished: boolean, extra: Partial<RequestScope> = {}): RequestScope {
  return {
    req: { method: 'GET', url } as IncomingMessage,
    res: { statusCode: status, writableFinished: finished } as ServerResponse,
    id: 'req-1',
    startedAt: performance.now() - 1.25,
    keyId: '',
    documentId: '',
    clientAddress: '',
    ...extra,
  } as RequestScope;
}

/** Everything but the clock and the duration, which differ between two lines by nature. */
const withoutTimes = ({ time, ms, ...rest }: Record<string, unknown>): Record<string, unknown> => ({
  ...rest,
  time: typeof time,
  ms: typeof ms,
});

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
    const graphql = scopeOf(`/graphql?documentId=${documentId}&variables=%7B%7D`, 200, true, {
      face: 'graphql',
      path: '/graphql',
      documentId,
    });
    log(graphql, performance.now());
    log(scopeOf('/v1/pets?limit=2&status=sold', 200, true), performance.now());
    expect(written.map(({ url, documentId }) => ({ url, documentId }))).toEqual([
      { url: '/graphql', documentId },
      { url: '/v1/pets?limit=2&status=sold', documentId: undefined },
    ]);
  });

  it.each([
    ['a plain request', scopeOf('/v1/pets/7', 200, true, { keyId: 'k1' })],
    ['a URL with quotes, backslashes and non-ASCII', scopeOf('/v1/pets/"x"\\y?name=Rex%20ü\u2028', 404, true)],
    [
      'a request by document id',
      scopeOf('/graphql', 200, true, { keyId: 'k2', documentId: `sha256:${'a'.repeat(64)}` }),
    ],
    ['a 401, with its client address', scopeOf('/v1/pets', 401, true, { clientAddress: '203.0.113.7' })],
    ['a 429, with its client address', scopeOf('/graphql', 429, true, { keyId: 'k3', clientAddress: '2001:db8::1' })],
  ])('writes the line pino would write for the same fields: %s', (_name, scope) => {
    const { logger: own, lines: written } = capturingLogger();
    createAccessLog(own)(scope, performance.now());
    own.info(
      {
        reqId: scope.id,
        method: scope.req.method,
        url: scope.req.url,
        status: scope.res.statusCode,
        ms: 1.3,
        keyId: scope.keyId || undefined,
        documentId: scope.documentId || undefined,
        clientAddress: scope.clientAddress || undefined,
      },
      'request',
    );
    expect(written).toHaveLength(2);
    const [ours, pinos] = written.map((line) => withoutTimes(line));
    expect(ours).toEqual(pinos);
    // Same keys in the same order, so a reader of the raw lines sees no difference either.
    expect(Object.keys(written[0] ?? {})).toEqual(Object.keys(written[1] ?? {}));
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
    // A 200 or 404 scope that knows its address still leaves it out.
    const { logger: own, lines: written } = capturingLogger();
    createAccessLog(own)(scopeOf('/v1/nowhere', 404, true, { clientAddress: '203.0.113.7' }), performance.now());
    expect(written[0]).not.toHaveProperty('clientAddress');
  });

  it('says when the client left before its answer, without a status', () => {
    const { logger: own, lines: written } = capturingLogger();
    createAccessLog(own)(scopeOf('/v1/pets', 200, false), performance.now());
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

  it('carries the trace ids it is given, first, as pino would with the same fields', () => {
    const { logger: own, lines: written } = capturingLogger();
    const trace = { trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16), trace_flags: '01' };
    createAccessLog(own)(scopeOf('/v1/pets', 200, true), performance.now(), trace);
    expect(written).toEqual([expect.objectContaining({ ...trace, reqId: 'req-1', status: 200 })]);
    expect(Object.keys(written[0] ?? {}).slice(0, 8)).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'trace_id',
      'span_id',
      'trace_flags',
      'reqId',
    ]);
  });

  it('writes nothing when the logger is above info', () => {
    const { logger: quiet, lines: written } = capturingLogger('warn');
    createAccessLog(quiet)(scopeOf('/v1/pets', 200, true), performance.now());
    expect(written).toEqual([]);
  });
});

describe("the access log into the service's own destination, lines built together", () => {
  const directory = mkdtempSync(join(tmpdir(), 'access-log-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  const linesOf = (file: string): LogLine[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);

  it("keeps every line in its place among the logger's others, each the line pino would write", async () => {
    const file = join(directory, 'order.log');
    const logger = createLogger('info', file);
    const accessLog = createAccessLog(logger);
    // Three times as many requests as are held back, with other lines between them at odd moments.
    const requests = ACCESS_LINES_HELD_BACK * 3;
    const expected: string[] = [];
    for (let n = 0; n < requests; n++) {
      accessLog(scopeOf(`/v1/pets/${n}`, 200, true, { id: `req-${n}`, keyId: 'k1' }), performance.now());
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
    accessLog(scopeOf('/v1/pets/1', 200, true), performance.now());
    await expect.poll(() => linesOf(file).length, { timeout: 2_000, interval: 10 }).toBe(1);
    expect(performance.now() - started).toBeLessThan(LOG_BATCH_INTERVAL_MS + 1_000);
  });

  it('writes a URL longer than a whole batch, in escapes and wide characters, whole', async () => {
    const file = join(directory, 'long.log');
    const accessLog = createAccessLog(createLogger('info', file));
    const url = `/v1/pets?name=${'ü"\\\u0001€'.repeat(LOG_BATCH_BYTES / 8)}`;
    accessLog(scopeOf('/v1/pets/1', 200, true), performance.now());
    accessLog(scopeOf(url, 400, true), performance.now());
    accessLog(scopeOf('/v1/pets/3', 200, true), performance.now());
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
