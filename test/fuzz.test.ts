/**
 * The schema-aware fuzz suite: thousands of generated requests (fixed seed, bounded count) against the
 * real service on the real database. Whatever a client sends, the service must answer it as a client's
 * mistake or a success: never 5xx, always JSON where JSON is due, in bounded time, in a size that does
 * not grow with a request header, and without an error-level log line (nor a stray console write).
 * A failure prints the smallest request fast-check could shrink it to, and the seed to replay it.
 */
import { Agent, request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { capturingLogger, ERROR_LEVEL } from './support/capturing-logger.ts';
import { type FuzzRequest, fuzzRequest, rawJunk } from './support/fuzz-http.ts';
import { exchangeRaw } from './support/raw-socket.ts';
import { API_KEY, useTestServer } from './support/test-server.ts';

const SEED = 20_261_125;
/** Generous: a request this slow has stalled, not merely run on a busy machine. */
const STALL_MS = 5_000;
/** A request id, a rate-limit counter or a new pet id may differ by a few bytes between two answers. */
const SIZE_SLACK_BYTES = 64;

const { logger, lines } = capturingLogger('warn');
const server = useTestServer({ logger });
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const consoleWrites: unknown[][] = [];

beforeAll(() => {
  for (const method of ['log', 'warn', 'error'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void consoleWrites.push(args));
  }
});
afterAll(() => {
  vi.restoreAllMocks();
  agent.destroy();
});

interface Answer {
  status: number;
  contentType: string;
  /** Bytes on the wire: the header block and the body. */
  bytes: number;
  body: string;
  ms: number;
}

function send({ method, path, headers, body }: FuzzRequest): Promise<Answer> {
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const outgoing = request(`${server.baseUrl}${path}`, { method, headers, agent, maxHeaderSize: 1 << 20 }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => {
        clearTimeout(deadline);
        const body = Buffer.concat(parts);
        const headerBytes = res.rawHeaders.reduce((sum, part) => sum + Buffer.byteLength(part) + 2, 0);
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          bytes: headerBytes + body.length,
          body: body.toString('utf8'),
          ms: performance.now() - startedAt,
        });
      });
    });
    const deadline = setTimeout(
      () => outgoing.destroy(new Error(`stalled: no answer within ${STALL_MS} ms`)),
      STALL_MS,
    );
    outgoing.on('error', (error) => {
      clearTimeout(deadline);
      reject(error);
    });
    outgoing.end(body);
  });
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** A client that asked for a page or a stream may get one, errors included (GraphQL over SSE or multipart). */
const asksForPageOrStream = ({ headers }: FuzzRequest) =>
  /text\/html|event-stream|multipart/i.test(headers.accept ?? '');
/** Routes whose every answer is JSON, unless the client asked for a page or a stream. */
const answersInJson = (sent: FuzzRequest) =>
  (sent.path.startsWith('/v1/pets') || sent.path.startsWith('/graphql?') || sent.path === '/graphql') &&
  !asksForPageOrStream(sent);

/** Everything wrong with one answer; empty when it is fine. */
function problemsOf(sent: FuzzRequest, answer: Answer, errorLines: unknown[]): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  // 431: node:http refuses a URL and headers over its limit before any listener runs, with no body.
  const bodyless = sent.method === 'HEAD' || [204, 301, 304, 431].includes(answer.status);
  const claimsJson = /json/.test(answer.contentType);
  if (!bodyless && claimsJson && !isJson(answer.body)) problems.push('a body that claims JSON but is not');
  const jsonDue = (answer.status >= 400 && !asksForPageOrStream(sent)) || answersInJson(sent);
  if (!bodyless && jsonDue && !claimsJson)
    problems.push(`non-JSON answer (${answer.contentType || 'no Content-Type'})`);
  if (errorLines.length) problems.push(`error-level log lines: ${JSON.stringify(errorLines).slice(0, 600)}`);
  return problems;
}

/** Sends one request; fails, with the request and what was wrong, on any problem. */
async function expectWellAnswered(sent: FuzzRequest): Promise<Answer> {
  const from = lines.length;
  const consoleFrom = consoleWrites.length;
  const answer = await send(sent);
  const errorLines = lines.slice(from).filter((line) => line.level >= ERROR_LEVEL);
  const problems = problemsOf(sent, answer, [...errorLines, ...consoleWrites.slice(consoleFrom).map(String)]);
  if (problems.length) {
    const request = `${sent.method} ${sent.path} ${JSON.stringify(sent.headers)} ${sent.body?.toString('utf8').slice(0, 600) ?? ''}`;
    throw new Error(
      `${problems.join('; ')}\nrequest: ${request}\nanswer: ${answer.status} ${answer.body.slice(0, 400)}`,
    );
  }
  return answer;
}

/** A request with one header grown to `length` characters of `unit`. */
function withLongHeader(base: FuzzRequest, name: string, unit: string, length: number): FuzzRequest {
  const filler = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
  const value = name === 'authorization' ? `Bearer ${filler}` : filler;
  return { ...base, headers: { ...base.headers, [name]: value } };
}

const KEY = { authorization: `Bearer ${API_KEY}` };
const BASES: FuzzRequest[] = [
  {
    method: 'POST',
    path: '/graphql',
    headers: { ...KEY, 'content-type': 'application/json' },
    body: Buffer.from('{"query":"{ __typename }"}'),
  },
  { method: 'GET', path: '/graphql?query=%7B__typename%7D', headers: KEY },
  { method: 'GET', path: '/v1/pets?limit=1', headers: KEY },
  { method: 'GET', path: '/v1/pets/999999', headers: KEY },
  {
    method: 'POST',
    path: '/v1/pets',
    headers: { ...KEY, 'content-type': 'application/json' },
    body: Buffer.from('{"name":"Rex","categoryId":1}'),
  },
  { method: 'GET', path: '/health', headers: {} },
  { method: 'GET', path: '/nowhere', headers: KEY },
  { method: 'GET', path: '/assets/missing.js', headers: {} },
];
const GROWN_HEADERS: Array<[string, string]> = [
  ['accept', 'x/y,'],
  ['content-type', 'a'],
  ['content-type', 'application/json; x=a'],
  ['authorization', 'k'],
  ['x-request-id', 'r'],
  ['idempotency-key', 'i'],
  ['if-none-match', '"e",'],
  ['accept-encoding', 'gzip;q=0.5,'],
  ['x-forwarded-for', '10.0.0.1,'],
  ['user-agent', 'u'],
  ['cookie', 'c=1;'],
  ['origin', 'o'],
  ['accept-language', 'en,'],
  ['x-custom', 'z'],
];

describe('the fuzz suite (fixed seed, bounded count)', () => {
  it('answers every generated request without 5xx, with JSON where due, in bounded time and no error line', async () => {
    const statuses = new Map<number, number>();
    let graphQLRequests = 0;
    let graphQLRan = 0;
    await fc.assert(
      fc.asyncProperty(fuzzRequest, async (sent) => {
        const answer = await expectWellAnswered(sent);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (!sent.path.startsWith('/graphql')) return;
        graphQLRequests++;
        if (answer.status === 200 && /^\{"data":\{/.test(answer.body)) graphQLRan++;
      }),
      { seed: SEED, numRuns: 3_000 },
    );
    // A fuzzer whose documents all fail to parse or validate would test little beyond the parser.
    expect(graphQLRan / graphQLRequests, JSON.stringify([...statuses])).toBeGreaterThan(0.1);
  }, 120_000);

  it('answers in a size that does not grow with any request header (2,000 against 6,000 characters)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...BASES), fc.constantFrom(...GROWN_HEADERS), async (base, [name, unit]) => {
        const short = await expectWellAnswered(withLongHeader(base, name, unit, 2_000));
        const long = await expectWellAnswered(withLongHeader(base, name, unit, 6_000));
        expect(Math.abs(long.bytes - short.bytes), `${name} on ${base.method} ${base.path}`).toBeLessThan(
          SIZE_SLACK_BYTES,
        );
      }),
      { seed: SEED, numRuns: 150 },
    );
  }, 60_000);

  it('answers or closes every raw-socket request within the deadline, never with 5xx or an error line', async () => {
    await fc.assert(
      fc.asyncProperty(rawJunk, async (bytes) => {
        const from = lines.length;
        const { answer, stalled } = await exchangeRaw(server.baseUrl, bytes, STALL_MS);
        expect(stalled, 'neither answered nor closed').toBe(false);
        expect(answer.toString('latin1')).not.toMatch(/^HTTP\/1\.[01] 5/);
        expect(lines.slice(from).filter((line) => line.level >= ERROR_LEVEL)).toEqual([]);
      }),
      { seed: SEED, numRuns: 300 },
    );
  }, 60_000);

  it('left no error line and no console write behind', () => {
    expect(lines.filter((line) => line.level >= ERROR_LEVEL)).toEqual([]);
    expect(consoleWrites).toEqual([]);
  });
});
