// A small GraphQL-over-SSE reader on fetch, as a fetch-based browser client would subscribe.

/** One SSE event: `next` (data is a GraphQL result) or `complete`. */
export interface SseEvent {
  event: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The next event, or a rejection when none comes within `withinMs` or the stream ends first. */
  next(withinMs?: number): Promise<SseEvent>;
  /** The next `next` event's GraphQL result. */
  nextResult(withinMs?: number): Promise<GraphQLResult>;
  /** Every event until the stream ends (within `withinMs`). */
  rest(withinMs?: number): Promise<SseEvent[]>;
  /** The client leaves: the connection is cut. */
  close(): void;
}

export interface GraphQLResult {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

export interface SubscribeOptions {
  query?: string;
  variables?: Record<string, unknown>;
  documentId?: string;
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  accept?: string;
}

const DEFAULT_WAIT_MS = 5_000;

/** Parses `event:`/`data:` blocks from text chunks; comment lines (pings) are skipped. */
function eventParser() {
  let buffer = '';
  return (chunk: string): SseEvent[] => {
    buffer += chunk;
    const events: SseEvent[] = [];
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = '';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (event !== '') events.push({ event, data: data.join('\n') });
    }
    return events;
  };
}

function requestOf(baseUrl: string, options: SubscribeOptions): { url: string; init: RequestInit } {
  const headers = { Accept: options.accept ?? 'text/event-stream', ...options.headers };
  const params: Record<string, unknown> = {};
  if (options.query !== undefined) params.query = options.query;
  if (options.documentId !== undefined) params.documentId = options.documentId;
  if (options.variables) params.variables = options.variables;
  if (options.method === 'GET') {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) {
      search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
    return { url: `${baseUrl}/graphql?${search}`, init: { headers } };
  }
  return {
    url: `${baseUrl}/graphql`,
    init: { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(params) },
  };
}

/** Opens a subscription over SSE; resolves once the response's headers are in. */
export async function subscribeSse(baseUrl: string, options: SubscribeOptions): Promise<SseStream> {
  const controller = new AbortController();
  const { url, init } = requestOf(baseUrl, options);
  const response = await fetch(url, { ...init, signal: controller.signal });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const parse = eventParser();
  const queued: SseEvent[] = [];
  let ended = false;
  let reading: Promise<void> | undefined;

  const readMore = () => {
    reading ??= reader.read().then(
      ({ done, value }) => {
        reading = undefined;
        if (done) ended = true;
        else queued.push(...parse(decoder.decode(value, { stream: true })));
      },
      () => {
        reading = undefined;
        ended = true;
      },
    );
    return reading;
  };

  async function next(withinMs = DEFAULT_WAIT_MS): Promise<SseEvent> {
    const deadline = performance.now() + withinMs;
    while (queued.length === 0) {
      if (ended) throw new Error('the stream ended before the next event');
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no event within ${withinMs} ms`);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
      });
      await Promise.race([readMore(), timeout]);
      clearTimeout(timer);
    }
    return queued.shift() as SseEvent;
  }

  return {
    status: response.status,
    headers: response.headers,
    next,
    async nextResult(withinMs) {
      const event = await next(withinMs);
      if (event.event !== 'next') throw new Error(`expected a next event, got ${event.event}`);
      return JSON.parse(event.data) as GraphQLResult;
    },
    async rest(withinMs = DEFAULT_WAIT_MS) {
      const deadline = performance.now() + withinMs;
      const events: SseEvent[] = [];
      for (;;) {
        try {
          events.push(await next(Math.max(1, deadline - performance.now())));
        } catch (error) {
          if (ended && queued.length === 0) return events;
          throw error;
        }
      }
    },
    close: () => controller.abort(),
  };
}
