// A real OpenTelemetry Collector (tools/otelcol: the Collector core with the OTLP receiver and the debug
// exporter), started by the test that needs it on free loopback ports, reading back every span it
// received from the debug exporter's `verbosity: detailed` text. It never outlives the test process
// (setpriv --pdeathsig), and it may be frozen (SIGSTOP) to play a Collector that accepts connections
// but never answers.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildOtelCollector, otelCollectorBinaryPath } from '../../scripts/build-otel-collector.ts';
import { freePort } from './free-port.ts';
import type { Requirement } from './required-tools.ts';
import { exited, spawnTied } from './tied-process.ts';

/** An attribute as the debug exporter prints it (`Str(..)`, `Int(..)`, `Bool(..)`, `Slice(..)`...), decoded. */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

/** `SpanKind.String()` of pdata: OTLP's SPAN_KIND_* without the prefix, capitalised. */
export type SpanKind = 'Unspecified' | 'Internal' | 'Server' | 'Client' | 'Producer' | 'Consumer';

export interface CollectedSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  /** 16 lowercase hex digits, or '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: SpanKind | string;
  traceState: string;
  status: { code: 'Unset' | 'Ok' | 'Error' | string; message: string };
  attributes: Attributes;
  /** The span's resource (`service.name`, ...) and instrumentation scope. */
  resource: Attributes;
  scope: { name: string; version: string };
  /** Span events; an error recorded on the span is an `exception` event. */
  events: { name: string; attributes: Attributes }[];
  /** As printed: `2020-02-11 20:26:12.000000321 +0000 UTC`. */
  startTime: string;
  endTime: string;
  durationMs: number;
}

export interface Collector {
  /** The OTLP/HTTP base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the SDK appends /v1/traces). */
  endpoint: string;
  /** Where OTLP/HTTP traces are posted (protobuf or JSON): `${endpoint}/v1/traces`. */
  tracesUrl: string;
  pid: number;
  /** Every span received so far, in the order received. */
  spans(): CollectedSpan[];
  /** Resolves with all spans once `predicate(all spans)` holds; rejects after `timeoutMs`. */
  waitForSpans(predicate: (spans: CollectedSpan[]) => boolean, timeoutMs?: number): Promise<CollectedSpan[]>;
  /** Forgets the spans received so far. */
  clear(): void;
  /**
   * SIGSTOP: the port still accepts connections (the kernel's backlog), nothing is answered. Resolves
   * once every thread is stopped: the kernel stops a running Go process's threads a moment after kill(2).
   */
  freeze(): Promise<void>;
  /** SIGCONT. */
  thaw(): void;
  /** The Collector's own log (stderr), for failure messages. */
  log: string[];
  /** Thaws, SIGTERM, SIGKILL if it does not exit in time; waits for the exit. Idempotent. */
  stop(): Promise<void>;
}

export interface CollectorOptions {
  /** Deadline of the build, when the binary is missing or stale (none in CI: its own step builds it). */
  buildTimeoutMs?: number;
  /** Progress lines of a build. */
  log?: (message: string) => void;
}

const START_DEADLINE_MS = 15_000;
/**
 * SIGTERM's graceful shutdown, then SIGKILL. Short: Go's http.Server.Shutdown waits up to 5 s for a
 * connection accepted without a request read on it (what a request sent to the frozen Collector leaves),
 * and nothing is lost by a kill (every span is printed before its export is answered).
 */
const STOP_DEADLINE_MS = 1_000;
const DEFAULT_WAIT_MS = 10_000;
const FREEZE_DEADLINE_MS = 2_000;

/** A built Collector, or Go to build one (CI builds it in its "otel collector build" step). */
export const OTEL_COLLECTOR: Requirement = {
  present: () => existsSync(otelCollectorBinaryPath()) || goInstalled(),
  missing: 'no Go toolchain to build the OpenTelemetry Collector (tools/otelcol)',
  fix: 'install Go 1.26 (https://go.dev/dl/), or build it elsewhere with npx tsx scripts/build-otel-collector.ts',
};

function goInstalled(): boolean {
  const path = process.env.PATH ?? '';
  return path.split(':').some((dir) => dir !== '' && existsSync(join(dir, 'go')));
}

/**
 * The Collector's configuration: OTLP over HTTP only, on `port`; the debug exporter prints every span in
 * full on stdout, synchronously (no sending queue: a span is printed before its POST is answered, and
 * a SIGTERM loses nothing); the Collector's own metrics off (no :8888, so several can run at once).
 */
function configuration(port: number): string {
  return [
    'receivers:',
    '  otlp:',
    '    protocols:',
    '      http:',
    `        endpoint: 127.0.0.1:${port}`,
    'exporters:',
    '  debug:',
    '    verbosity: detailed',
    '    use_internal_logger: false',
    '    output_paths: [stdout]',
    // zap's sampler logs the first `initial` entries a second, then every `thereafter`-th: all of them.
    '    sampling_initial: 1000',
    '    sampling_thereafter: 1',
    '    sending_queue:',
    '      enabled: false',
    'service:',
    '  telemetry:',
    '    logs:',
    '      level: info',
    '    metrics:',
    '      level: none',
    '  pipelines:',
    '    traces:',
    '      receivers: [otlp]',
    '      exporters: [debug]',
    '',
  ].join('\n');
}

// --- the debug exporter's detailed text --------------------------------------------------------------
// As printed by go.opentelemetry.io/collector/exporter/debugexporter/internal/otlptext (the same layout
// since the logging exporter it replaced):
//
//   ResourceSpans #0
//   Resource SchemaURL: https://opentelemetry.io/schemas/1.40.0
//   Resource attributes:
//        -> service.name: Str(petstore-gateway)
//   ScopeSpans #0
//   ScopeSpans SchemaURL:
//   InstrumentationScope @opentelemetry/instrumentation-http 0.223.0
//   Span #0
//       Trace ID       : 0102030405060708090a0b0c0d0e0f10
//       Parent ID      :
//       ID             : 1112131415161718
//       Name           : GET /v1/pets/{petId}
//       Kind           : Server
//       Start time     : 2020-02-11 20:26:12.000000321 +0000 UTC
//       End time       : 2020-02-11 20:26:13.000000789 +0000 UTC
//       Status code    : Error
//       Status message : boom
//   Attributes:
//        -> http.route: Str(/v1/pets/{petId})
//   Events:
//   SpanEvent #0
//        -> Name: exception
//        -> Attributes::
//             -> exception.message: Str(boom)
//   Links:
//   ...
//
// With `use_internal_logger: false` the batch is one zap console entry, "Traces\t{...}" before it and a
// blank line after it; with the internal logger a timestamp and level prefix its first line and the
// entry's fields follow on a line starting with a tab. Older versions printed kinds and codes as
// SPAN_KIND_SERVER and STATUS_CODE_ERROR. A string attribute holding newlines spans several lines.

const ATTRIBUTE = /^( +)-> (.*?): (Empty|Str|Int|Double|Bool|Map|Slice|Bytes)\((.*)$/;
const SPAN_FIELD = /^ {4}(\S[^:]*?) *: ?(.*)$/;

type Section =
  | 'idle'
  | 'resource'
  | 'resourceAttributes'
  | 'scope'
  | 'scopeAttributes'
  | 'span'
  | 'spanAttributes'
  | 'event'
  | 'eventAttributes'
  | 'ignore';

interface PendingAttribute {
  target: Attributes;
  key: string;
  type: string;
  raw: string;
}

interface PendingSpan {
  fields: Record<string, string>;
  attributes: Attributes;
  resource: Attributes;
  scope: { name: string; version: string };
  events: { name: string; attributes: Attributes }[];
}

function decode(type: string, raw: string): AttributeValue {
  switch (type) {
    case 'Empty':
      return null;
    case 'Int':
    case 'Double': {
      const value = Number(raw);
      return Number.isNaN(value) && raw !== 'NaN' ? raw : value;
    }
    case 'Bool':
      return raw === 'true';
    case 'Map':
    case 'Slice':
      try {
        return JSON.parse(raw) as AttributeValue;
      } catch {
        return raw;
      }
    default:
      return raw;
  }
}

/** `SPAN_KIND_SERVER` (older Collectors) -> `Server`; `STATUS_CODE_ERROR` -> `Error`. */
function normalise(value: string, prefix: string): string {
  if (!value.startsWith(prefix)) return value;
  const word = value.slice(prefix.length).toLowerCase();
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** `2020-02-11 20:26:12.000000321 +0000 UTC` (Go's Time.String: trailing zeros trimmed) -> ns since the epoch. */
function epochNs(printed: string): bigint | undefined {
  const match = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,9}))? ([+-]\d\d)(\d\d)/.exec(printed);
  if (!match) return undefined;
  const [, date, time, fraction = '', zoneHours, zoneMinutes] = match;
  const ms = Date.parse(`${date}T${time}${zoneHours}:${zoneMinutes}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt(fraction.padEnd(9, '0'));
}

function durationMs(start: string, end: string): number {
  const [from, to] = [epochNs(start), epochNs(end)];
  return from === undefined || to === undefined ? Number.NaN : Number(to - from) / 1e6;
}

/** Reads the debug exporter's output line by line; a span is delivered once its block has ended. */
export class DebugOutputParser {
  private section: Section = 'idle';
  private resource: Attributes = {};
  private scope = { name: '', version: '' };
  private span: PendingSpan | undefined;
  private attribute: PendingAttribute | undefined;

  constructor(private readonly deliver: (span: CollectedSpan) => void) {}

  /** One line of output, without its newline. */
  line(text: string): void {
    const line = text.replace(/\r$/, '');
    if (!this.header(line)) this.content(line);
  }

  /** Handles a line that opens a block or a section; false for anything else. */
  private header(line: string): boolean {
    if (line.trim() === '' || /^\t\{/.test(line)) {
      // The end of one batch: a blank line, or the fields of the zap entry that printed it.
      this.end();
    } else if (/(^|\s)ResourceSpans #\d+$/.test(line)) {
      this.end();
      this.resource = {};
      this.section = 'resource';
    } else if (/^Resource attributes:$/.test(line)) {
      this.enter('resourceAttributes');
    } else if (/^ScopeSpans #\d+$/.test(line)) {
      this.finishSpan();
      this.scope = { name: '', version: '' };
      this.section = 'scope';
    } else if (/^InstrumentationScope attributes:$/.test(line)) {
      this.enter('scopeAttributes');
    } else if (this.section === 'scope' && /^InstrumentationScope /.test(line)) {
      const [name = '', ...version] = line.slice('InstrumentationScope '.length).split(' ');
      this.scope = { name, version: version.join(' ').trim() };
    } else if (/^Span #\d+$/.test(line)) {
      this.finishSpan();
      this.span = { fields: {}, attributes: {}, resource: this.resource, scope: this.scope, events: [] };
      this.section = 'span';
    } else if (this.span && /^Attributes:$/.test(line)) {
      this.enter('spanAttributes');
    } else if (this.span && /^(Events|Links):$/.test(line)) {
      this.enter('ignore');
    } else if (this.span && /^SpanEvent #\d+$/.test(line)) {
      this.span.events.push({ name: '', attributes: {} });
      this.enter('event');
    } else {
      return false;
    }
    return true;
  }

  /** The end of the output: delivers the span still open. */
  end(): void {
    this.finishSpan();
    this.section = 'idle';
  }

  private enter(section: Section): void {
    this.closeAttribute();
    this.section = section;
  }

  private content(line: string): void {
    const span = this.span;
    const event = span?.events.at(-1);
    switch (this.section) {
      case 'span': {
        const field = SPAN_FIELD.exec(line);
        if (field && span) span.fields[field[1] as string] = field[2] ?? '';
        return;
      }
      case 'event': {
        const name = /^ {5}-> Name: (.*)$/.exec(line);
        if (name && event) event.name = name[1] ?? '';
        else if (/^ {5}-> Attributes::?$/.test(line)) this.section = 'eventAttributes';
        return;
      }
      case 'resourceAttributes':
        this.attributeLine(line, 5, this.resource);
        return;
      case 'spanAttributes':
        if (span) this.attributeLine(line, 5, span.attributes);
        return;
      case 'eventAttributes':
        if (event) this.attributeLine(line, 10, event.attributes);
        return;
      default:
        // The scope's attributes, links, schema URLs, counts of dropped items: not kept.
        return;
    }
  }

  private attributeLine(line: string, indent: number, target: Attributes): void {
    const match = ATTRIBUTE.exec(line);
    if (match && (match[1] as string).length === indent) {
      this.closeAttribute();
      this.attribute = { target, key: match[2] as string, type: match[3] as string, raw: match[4] as string };
      this.store();
    } else if (match || /^\s*-> /.test(line) || /^[A-Z][\w ]*[:#]/.test(line)) {
      // Another structure (entity refs, a header this parser does not know): not an attribute of ours.
      this.enter('ignore');
    } else if (this.attribute) {
      // A string attribute with a newline in it goes on over the next lines.
      this.attribute.raw += `\n${line}`;
      this.store();
    }
  }

  /** Stores the attribute as read so far (its closing parenthesis is the last character read). */
  private store(): void {
    const attribute = this.attribute;
    if (!attribute) return;
    const raw = attribute.raw.endsWith(')') ? attribute.raw.slice(0, -1) : attribute.raw;
    attribute.target[attribute.key] = decode(attribute.type, raw);
  }

  private closeAttribute(): void {
    this.attribute = undefined;
  }

  private finishSpan(): void {
    this.closeAttribute();
    const span = this.span;
    this.span = undefined;
    if (!span) return;
    const field = (name: string) => (span.fields[name] ?? '').trim();
    const startTime = field('Start time');
    const endTime = field('End time');
    this.deliver({
      traceId: field('Trace ID').toLowerCase(),
      spanId: field('ID').toLowerCase(),
      parentSpanId: field('Parent ID').toLowerCase(),
      name: span.fields.Name ?? '',
      kind: normalise(field('Kind'), 'SPAN_KIND_'),
      traceState: field('TraceState'),
      status: { code: normalise(field('Status code'), 'STATUS_CODE_'), message: span.fields['Status message'] ?? '' },
      attributes: span.attributes,
      resource: span.resource,
      scope: span.scope,
      events: span.events,
      startTime,
      endTime,
      durationMs: durationMs(startTime, endTime),
    });
  }
}

/** Every span in a whole piece of debug exporter output. */
export function parseDebugOutput(text: string): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  const parser = new DebugOutputParser((span) => spans.push(span));
  for (const line of text.split('\n')) parser.line(line);
  parser.end();
  return spans;
}

// --- the process --------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether every thread of `pid` is stopped (state T in /proc), or the process is gone. */
function allThreadsStopped(pid: number): boolean {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true;
  }
  return threads.every((thread) => {
    try {
      // `pid (comm) S ...`: the state follows the last ')' (comm may hold spaces and parentheses).
      const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
      return /^[Tt]/.test(stat.slice(stat.lastIndexOf(')') + 2));
    } catch {
      return true;
    }
  });
}

/** Any HTTP answer on the OTLP path (405 to a GET) means the receiver, and so the pipeline, is up. */
async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

interface Started {
  child: ChildProcess;
  port: number;
  dir: string;
  log: string[];
  parser: (listener: (span: CollectedSpan) => void) => void;
}

async function spawnCollector(binary: string): Promise<Started> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-otelcol-'));
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, configuration(port));
  const args = [`--config=file:${configPath}`];
  const child = spawnTied(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
    log.push(line);
    if (log.length > 2_000) log.splice(0, 1_000);
  });
  let listener: (span: CollectedSpan) => void = () => {};
  const parser = new DebugOutputParser((span) => listener(span));
  const stdout = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  stdout.on('line', (line) => parser.line(line));
  stdout.on('close', () => parser.end());
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });

  const tracesUrl = `http://127.0.0.1:${port}/v1/traces`;
  const deadline = Date.now() + START_DEADLINE_MS;
  for (;;) {
    const failure = spawnError
      ? `could not be run (${spawnError.message})`
      : child.exitCode !== null || child.signalCode !== null
        ? `exited (${child.exitCode ?? child.signalCode}) while starting`
        : Date.now() > deadline
          ? `did not answer on ${tracesUrl} within ${START_DEADLINE_MS} ms`
          : undefined;
    if (failure) {
      child.kill('SIGKILL');
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
      throw Object.assign(new Error(`OpenTelemetry Collector ${failure}:\n${log.slice(-40).join('\n')}`), {
        portTaken: log.some((line) => /address already in use/i.test(line)),
      });
    }
    if (await answers(tracesUrl)) break;
    await sleep(50);
  }
  return {
    child,
    port,
    dir,
    log,
    parser: (next) => {
      listener = next;
    },
  };
}

/**
 * Starts a Collector (building it first when its binary is missing or stale) and resolves once its
 * OTLP/HTTP receiver answers.
 */
export async function startCollector(options: CollectorOptions = {}): Promise<Collector> {
  const binary = await buildOtelCollector({ log: options.log ?? (() => {}), timeoutMs: options.buildTimeoutMs });
  let started: Started | undefined;
  // Another process may take the free port before the Collector binds it: try another.
  for (let attempt = 1; !started; attempt++) {
    try {
      started = await spawnCollector(binary);
    } catch (error) {
      if (attempt >= 3 || !(error as { portTaken?: boolean }).portTaken) throw error;
    }
  }
  const { child, port, dir, log } = started;
  let received: CollectedSpan[] = [];
  const waiters = new Set<() => void>();
  started.parser((span) => {
    received.push(span);
    for (const wake of waiters) wake();
  });

  let frozen = false;
  let stopped: Promise<void> | undefined;
  const signal = (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
  };
  const endpoint = `http://127.0.0.1:${port}`;

  return {
    endpoint,
    tracesUrl: `${endpoint}/v1/traces`,
    pid: child.pid as number,
    log,
    spans: () => [...received],
    clear() {
      received = [];
    },
    waitForSpans(predicate, timeoutMs = DEFAULT_WAIT_MS) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve([...received]);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const seen = received.map(
            (span) => `  ${span.traceId} ${span.spanId} <- ${span.parentSpanId || '(root)'} ${span.name}`,
          );
          reject(
            new Error(
              `the Collector did not receive the spans waited for in ${timeoutMs} ms${frozen ? ' (it is frozen)' : ''}; ` +
                `received ${received.length}:\n${seen.join('\n')}\nits log:\n${log.slice(-20).join('\n')}`,
            ),
          );
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    async freeze() {
      signal('SIGSTOP');
      frozen = true;
      const deadline = Date.now() + FREEZE_DEADLINE_MS;
      while (!allThreadsStopped(child.pid as number)) {
        if (Date.now() > deadline)
          throw new Error(`the Collector was not stopped ${FREEZE_DEADLINE_MS} ms after SIGSTOP`);
        await sleep(5);
      }
    },
    thaw() {
      if (frozen) signal('SIGCONT');
      frozen = false;
    },
    stop() {
      stopped ??= (async () => {
        if (frozen) signal('SIGCONT');
        frozen = false;
        const gone = exited(child);
        signal('SIGTERM');
        const late = setTimeout(() => signal('SIGKILL'), STOP_DEADLINE_MS);
        await gone;
        clearTimeout(late);
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
