// Subscribers for the fan-out measurement, in a process of their own (forked by bench/fan-out.ts):
// each stream one node:http keep-alive connection reading `petCreated` over SSE as Yoga serves it.
// A stream counts as open at its first bytes (Yoga's `:` comment). Armed with a pet's name, each
// stream records when an event carrying it arrives, on the clock all the processes share.
// Messages: fan-out-protocol.ts; a lost channel or `stop` ends every stream and exits.

import { Agent, type ClientRequest as HttpRequest, request } from 'node:http';
import { type ClientRequest, type Collected, fdUse, type Opened, type Reply, sharedNow } from './fan-out-protocol.ts';

const SUBSCRIPTION = 'subscription FanOut { petCreated { cursor pet { id name status } } }';
/** Enough of a chunk's end to find a name split across two chunks. */
const KEEP_CHARS = 256;

interface Stream {
  req: HttpRequest;
  arrival: number;
  tail: string;
  ended: boolean;
}

const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
const streams: Stream[] = [];
let wanted: string | undefined;
let arrived = 0;
let onArrival: (() => void) | undefined;

function receive(stream: Stream, chunk: string): void {
  if (wanted === undefined || !Number.isNaN(stream.arrival)) return;
  const text = stream.tail + chunk;
  if (text.includes(wanted)) {
    stream.arrival = sharedNow();
    arrived++;
    onArrival?.();
  } else stream.tail = text.slice(-KEEP_CHARS);
}

/** One stream; resolves once it is open, or with why it is not (a status, an error code, `timeout`). */
function openStream(url: string, apiKey: string, deadline: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ query: SUBSCRIPTION });
    const headers = {
      authorization: `Bearer ${apiKey}`,
      accept: 'text/event-stream',
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    };
    const req = request(`${url}/graphql`, { method: 'POST', agent, headers });
    const stream: Stream = { req, arrival: Number.NaN, tail: '', ended: false };
    let settled = false;
    const settle = (failure?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (failure) req.destroy();
      else streams.push(stream);
      resolve(failure);
    };
    const timer = setTimeout(() => settle('timeout'), Math.max(0, deadline - Date.now()));
    req.on('error', (error: NodeJS.ErrnoException) => {
      stream.ended = true;
      settle(error.code ?? error.message);
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.resume();
        return settle(`status ${res.statusCode}`);
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        settle();
        receive(stream, chunk);
      });
      res.on('close', () => {
        stream.ended = true;
        settle('ended before its first bytes');
      });
    });
    req.end(body);
  });
}

async function open(request: Extract<ClientRequest, { type: 'open' }>): Promise<Opened> {
  const deadline = Date.now() + request.deadlineMs;
  const failures: Record<string, number> = {};
  let started = 0;
  let opened = 0;
  const worker = async () => {
    while (started < request.count && Date.now() < deadline) {
      started++;
      const failure = await openStream(request.url, request.apiKey, deadline);
      if (failure === undefined) opened++;
      else failures[failure] = (failures[failure] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(request.concurrency, request.count) }, worker));
  if (started < request.count) failures['not started before the deadline'] = request.count - started;
  return { opened, failures, fds: fdUse() };
}

/** Resolves when every live stream has the armed pet, or at the deadline. */
async function collect(deadlineMs: number): Promise<Collected> {
  const live = () => streams.filter((stream) => !stream.ended).length;
  await new Promise<void>((done) => {
    const finish = () => {
      clearTimeout(timer);
      onArrival = undefined;
      done();
    };
    const timer = setTimeout(finish, deadlineMs);
    onArrival = () => arrived >= live() && finish();
    onArrival();
  });
  wanted = undefined;
  const arrivals = streams.map((stream) => stream.arrival).filter((arrival) => !Number.isNaN(arrival));
  const ended = streams.length - live();
  return { arrivals, missing: streams.length - arrivals.length, ended };
}

/** Cuts every stream (the client leaves); resolves once their connections are closed, or at the deadline. */
async function closeAll(deadlineMs: number): Promise<number> {
  const closing = streams.splice(0).map(
    (stream) =>
      new Promise<void>((done) => {
        if (stream.ended) return done();
        stream.req.once('close', () => done());
        stream.req.destroy();
      }),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(closing), new Promise((done) => (timer = setTimeout(done, deadlineMs)))]);
  clearTimeout(timer);
  return closing.length;
}

async function answer(message: ClientRequest): Promise<unknown> {
  switch (message.type) {
    case 'open':
      return open(message);
    case 'arm':
      for (const stream of streams) {
        stream.arrival = Number.NaN;
        stream.tail = '';
      }
      arrived = 0;
      wanted = message.name;
      return streams.length;
    case 'collect':
      return collect(message.deadlineMs);
    case 'close':
      return closeAll(message.deadlineMs);
    case 'fds':
      return fdUse();
  }
}

function stop(): void {
  for (const stream of streams) stream.req.destroy();
  process.exit(0);
}

process.on('disconnect', stop);
process.on('SIGTERM', stop);
process.on('message', (message: ClientRequest | { type: 'stop' }) => {
  if (message.type === 'stop') return stop();
  answer(message).then(
    (value) => process.send?.({ type: 'reply', id: message.id, value } satisfies Reply<unknown>),
    (error: Error) => process.send?.({ type: 'reply', id: message.id, error: error.message } satisfies Reply<unknown>),
  );
});
process.send?.({ type: 'ready', fds: fdUse() });
