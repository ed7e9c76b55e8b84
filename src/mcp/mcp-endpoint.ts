import { readFileSync } from 'node:fs';
import type { CallToolResult, McpHttpHandler, McpRequestContext } from '@modelcontextprotocol/server';
import { trace } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { ExecutionExchange } from '../context.ts';
import type { Exchange } from '../http/exchange.ts';
import { ClientClosedError } from '../http/read-body.ts';
import { errorBody, sendError } from '../http/send-json.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { RestExecutor } from '../rest/executor.ts';
import { RestError } from '../rest/http-errors.ts';
import { loadOpenApiDocument } from '../rest/openapi-document.ts';
import { readJsonBody } from '../rest/request-body.ts';
import { type PetTool, petTools } from './mcp-tools.ts';

export const MCP_ENDPOINT = '/mcp';
/** The most array elements and object members one call's arguments may hold: a NewPet has four. */
const MAX_TOOL_INPUT_ELEMENTS = 64;
/** A span names the JSON-RPC method a client sent up to this length (the protocol's are far shorter). */
const MAX_METHOD_LENGTH = 64;

export interface McpEndpointOptions {
  /** REST_BASE_PATH, and MAX_BODY_BYTES: a tool call is never larger than the REST request it stands for. */
  config: Pick<Config, 'REST_BASE_PATH' | 'MAX_BODY_BYTES'>;
  rest: Pick<RestExecutor, 'answer'>;
  logger: Logger;
  metrics: Metrics;
}

/** What the factory learns of the request it serves, and tells back: whether the call reached its tool. */
interface CallState {
  exchange: Exchange;
  /** The tool a `tools/call` names ('' for other methods). */
  called: string;
  ran: boolean;
}

/** The name and version clients are told (initialize, server/discover): the package's. */
function serverInfo(): { name: string; version: string } {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return { name: 'petstore-gateway', version };
}

/**
 * What a tool call's execution sees: the HTTP request's key and scopes, and the call's own
 * Idempotency-Key (an argument, not a header). One per call, so one key names one create. Headers the
 * execution sets are kept here: a streamed answer has sent its own by then.
 */
class ToolCallExchange implements ExecutionExchange {
  documentId = '';
  readonly responseHeaders = new Map<string, string>();

  constructor(
    private readonly http: Exchange,
    private readonly idempotencyKey: string | undefined,
  ) {}

  get id() {
    return this.http.id;
  }
  get face() {
    return this.http.face;
  }
  get keyId() {
    return this.http.keyId;
  }
  get scopes() {
    return this.http.scopes;
  }
  get arbitraryDocuments() {
    return this.http.arbitraryDocuments;
  }
  clientGone(): boolean {
    return this.http.clientGone();
  }
  setResponseHeader(name: string, value: string): void {
    this.responseHeaders.set(name.toLowerCase(), value);
  }
  headerValues(): readonly string[] | undefined {
    return this.idempotencyKey === undefined ? undefined : [this.idempotencyKey];
  }
}

/** A JSON-RPC message's method, and the tool a `tools/call` names. */
function callOf(message: unknown): { method: string; tool: string } {
  if (typeof message !== 'object' || message === null) return { method: '', tool: '' };
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  const tool = method === 'tools/call' && typeof params?.name === 'string' ? params.name : '';
  return { method: typeof method === 'string' ? method : '', tool };
}

/** The text block beside a result: the same JSON, for clients that read no structured content. */
const resultOf = (structured: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(structured) }],
  structuredContent: structured,
});

/** A failed call: the contract's Error body, as REST would have answered it. */
const errorResultOf = (error: RestError): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(errorBody(error)) }],
  isError: true,
});

/** The request as the SDK reads it. Its URL is fixed: a Host a client chose may be no URL at all. */
function requestOf(exchange: Exchange, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(exchange.req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (value) for (const each of value) headers.append(name, each);
  }
  return new Request(`http://localhost${MCP_ENDPOINT}`, { method: 'POST', headers, signal });
}

/** Hop-by-hop headers are the edge's to set: a draining instance's Connection: close must stand. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

/** Until the response can take more, or has closed. */
function writable(res: Exchange['res']): Promise<void> {
  return new Promise((resume) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resume();
    };
    res.once('drain', done).once('close', done);
  });
}

async function writeResponse(exchange: Exchange, response: Response): Promise<void> {
  const { res } = exchange;
  response.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) res.setHeader(name, value);
  });
  res.writeHead(response.status);
  if (!response.body) return void res.end();
  // Node's web streams iterate; TypeScript's DOM types do not say so.
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await writable(res);
  }
  res.end();
}

/** Runs a call through the tool's REST twin: its answer as a result, its failure as the contract's Error. */
function toolRunner({ config, rest, metrics }: McpEndpointOptions) {
  return async (tool: PetTool, args: Record<string, unknown>, exchange: Exchange): Promise<CallToolResult> => {
    const called = new ToolCallExchange(exchange, tool.idempotencyKey?.(args));
    try {
      const result = await rest.answer(tool.operation, called, tool.request(args, config.REST_BASE_PATH));
      metrics.countMcpToolCall(tool.name, 'ok');
      const replayed = called.responseHeaders.get('idempotent-replayed') === 'true';
      // REST's Idempotent-Replayed header, for an agent that wants to know the pet was added before.
      return { ...resultOf(tool.output(result)), ...(replayed ? { _meta: { idempotentReplayed: true } } : {}) };
    } catch (error) {
      // answer() gives every failure as the RestError REST would send (an unexpected one logged, masked).
      const refusal = error instanceof RestError ? error : new RestError('INTERNAL_SERVER_ERROR', 'Unexpected error.');
      metrics.countMcpToolCall(tool.name, refusal.code.toLowerCase());
      return errorResultOf(refusal);
    }
  };
}

/** The SDK's handler for both protocol eras, one server per request, with the tools the request's key may see. */
async function loadHandler(options: McpEndpointOptions, tools: readonly PetTool[]): Promise<McpHttpHandler> {
  const { createMcpHandler, fromJsonSchema, McpServer } = await import('@modelcontextprotocol/server');
  const run = toolRunner(options);
  // Compiled once: the SDK validates arguments and results against them on every call.
  const compiled = tools.map((tool) => ({
    tool,
    input: fromJsonSchema<Record<string, unknown>>(tool.inputSchema),
    output: fromJsonSchema<Record<string, unknown>>(tool.outputSchema),
  }));
  const info = serverInfo();
  // A key is shown the tools its scopes allow; it may call another by name, and is told which scope it lacks.
  const factory = ({ authInfo }: McpRequestContext) => {
    const state = authInfo?.extra as unknown as CallState;
    // The tool list never changes while a server runs: no listChanged, so no stream to hold open for it.
    const server = new McpServer(info, {
      maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS,
      capabilities: { tools: { listChanged: false } },
    });
    for (const { tool, input, output } of compiled) {
      if (!state.exchange.scopes.has(tool.scope) && tool.name !== state.called) continue;
      const annotations = { readOnlyHint: tool.readOnly, destructiveHint: false, idempotentHint: true };
      const about = { title: tool.title, description: tool.description, annotations };
      server.registerTool(tool.name, { ...about, inputSchema: input, outputSchema: output }, (args) => {
        state.ran = true;
        return run(tool, args, state.exchange);
      });
    }
    return server;
  };
  // No maxRequestBodySize: the body is read, within MAX_BODY_BYTES, before the SDK is called.
  return createMcpHandler(factory, {
    onerror: (error) => options.logger.debug({ err: error }, 'MCP request refused'),
  });
}

/** The request's one JSON-RPC message; undefined when it was answered (415, 413, 400). */
async function messageOf(exchange: Exchange, maxBytes: number): Promise<unknown> {
  let message: unknown;
  try {
    message = await readJsonBody(exchange.req, maxBytes);
  } catch (error) {
    if (error instanceof ClientClosedError) return void exchange.res.destroy();
    if (error instanceof RestError) return void sendError(exchange.res, 'rest', error);
    throw error;
  }
  // One message per request: one point, one access-log line (the 2025-06-18 revision dropped batches).
  if (!Array.isArray(message)) return message;
  const refusal = 'Send one JSON-RPC message per request: batches are not taken';
  sendError(exchange.res, 'rest', { status: 400, code: 'BAD_USER_INPUT', message: refusal });
  return undefined;
}

/**
 * POST /mcp: MCP's Streamable HTTP transport, stateless (any instance answers any request), served by
 * the official SDK for the 2025 revisions and 2026-07-28. The edge has checked the Origin,
 * authenticated the key and charged its point; each request carries one JSON-RPC message, so a tool
 * call costs what its REST twin costs. The SDK, and the tools' schemas, are loaded at the first
 * request: a deployment no agent calls does not carry them.
 */
export function createMcpEndpoint(options: McpEndpointOptions) {
  const { metrics } = options;
  let loading: Promise<{ handler: McpHttpHandler; names: Set<string> }> | undefined;
  const load = async () => {
    const tools = petTools(loadOpenApiDocument());
    return { handler: await loadHandler(options, tools), names: new Set(tools.map((tool) => tool.name)) };
  };

  return async function serveMcp(exchange: Exchange): Promise<void> {
    const message = await messageOf(exchange, options.config.MAX_BODY_BYTES);
    if (message === undefined) return;
    // A failed load is tried again by the next request, not kept.
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    const { handler, names } = await loading;
    const { method, tool } = callOf(message);
    const known = names.has(tool);
    exchange.tool = known ? tool : '';
    const methodName = method.length <= MAX_METHOD_LENGTH ? method : 'other';
    trace.getActiveSpan()?.setAttributes({
      'mcp.method.name': methodName,
      ...(known ? { 'gen_ai.tool.name': tool } : {}),
    });
    const aborted = new AbortController();
    exchange.whenClosed(() => aborted.abort());
    const state: CallState = { exchange, called: tool, ran: false };
    const response = await handler.fetch(requestOf(exchange, aborted.signal), {
      authInfo: {
        token: '',
        clientId: exchange.keyId,
        scopes: [...exchange.scopes],
        extra: state as unknown as Record<string, unknown>,
      },
      parsedBody: message,
    });
    // A call the SDK refused before its tool ran: no such tool, arguments its schema refuses (a
    // result), or the request itself (its headers, its era).
    if (method === 'tools/call' && !state.ran) {
      const outcome = !known ? 'unknown_tool' : response.status === 200 ? 'invalid_arguments' : 'refused';
      metrics.countMcpToolCall(known ? tool : 'unknown', outcome);
    }
    await writeResponse(exchange, response);
  };
}
