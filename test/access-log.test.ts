import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createAccessLog } from '../src/edge/access-log.ts';
import type { RequestScope } from '../src/http/request-scope.ts';
import { capturingLogger, linesDuring } from './support/capturing-logger.ts';
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
    ...extra,
  } as RequestScope;
}

/** Everything but the clock and the duration, which differ between two lines by nature. */
const withoutTimes = ({ time, ms, ...rest }: Record<string, unknown>) => ({
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

  it.each([
    ['a plain request', scopeOf('/v1/pets/7', 200, true, { keyId: 'k1' })],
    ['a URL with quotes, backslashes and non-ASCII', scopeOf('/v1/pets/"x"\\y?name=Rex%20ü\u2028', 404, true)],
    [
      'a request by document id',
      scopeOf('/graphql', 200, true, { keyId: 'k2', documentId: `sha256:${'a'.repeat(64)}` }),
    ],
  ])('writes the line pino would write for the same fields: %s', (_name, scope) => {
    const { logger: own, lines: written } = capturingLogger();
    createAccessLog(own)(scope);
    own.info(
      {
        reqId: scope.id,
        method: scope.req.method,
        url: scope.req.url,
        status: scope.res.statusCode,
        ms: 1.3,
        keyId: scope.keyId || undefined,
        documentId: scope.documentId || undefined,
      },
      'request',
    );
    expect(written).toHaveLength(2);
    const [ours, pinos] = written.map((line) => withoutTimes(line));
    expect(ours).toEqual(pinos);
    // Same keys in the same order, so a reader of the raw lines sees no difference either.
    expect(Object.keys(written[0] ?? {})).toEqual(Object.keys(written[1] ?? {}));
  });

  it('says when the client left before its answer, without a status', () => {
    const { logger: own, lines: written } = capturingLogger();
    createAccessLog(own)(scopeOf('/v1/pets', 200, false));
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
    createAccessLog(own)(scopeOf('/v1/pets', 200, true), trace);
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
    createAccessLog(quiet)(scopeOf('/v1/pets', 200, true));
    expect(written).toEqual([]);
  });
});
