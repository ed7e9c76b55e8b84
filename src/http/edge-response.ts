import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** What writeHead takes: an object, [[name, value], ...] or [name, value, ...]. */
type HeaderList = OutgoingHttpHeaders | readonly OutgoingHttpHeader[];

const sameName = (a: string, b: string) => a.length === b.length && a.toLowerCase() === b.toLowerCase();

const isVary = (name: string) => sameName(name, 'vary');

/** Vary lists what the answer depends on: a later Vary adds to an earlier one (CORS's Origin stays). */
function joinVary<Later>(earlier: unknown, later: Later): Later | string {
  // An undefined value stays for Node to refuse, as it would have.
  return earlier === undefined || later === undefined ? later : `${earlier}, ${later}`;
}

/** Adds a header to a flat [name, value, ...] list, replacing any of the same name (adding to it for Vary). */
function put(pairs: OutgoingHttpHeader[], name: string, given: OutgoingHttpHeader | undefined): void {
  let value = given;
  for (let i = pairs.length - 2; i >= 0; i -= 2) {
    if (!sameName(pairs[i] as string, name)) continue;
    if (isVary(name)) value = joinVary(pairs[i + 1], value);
    pairs.splice(i, 2);
  }
  pairs.push(name, value as OutgoingHttpHeader);
}

/** The early headers, then the answer's own (which replace any of the same name), as one flat list. */
function merged(early: OutgoingHttpHeader[], own: HeaderList | undefined): OutgoingHttpHeader[] {
  if (own === undefined) return early;
  if (!Array.isArray(own)) {
    for (const name in own) if (Object.hasOwn(own, name)) put(early, name, (own as OutgoingHttpHeaders)[name]);
  } else if (Array.isArray(own[0])) {
    for (const [name, value] of own as unknown as [string, OutgoingHttpHeader][]) put(early, name, value);
  } else {
    for (let i = 0; i < own.length; i += 2) put(early, own[i] as string, own[i + 1]);
  }
  return early;
}

/**
 * The ServerResponse of our servers (createHttpServer hands it to node:http). Headers decided
 * before there is an answer (the request id, nosniff, the cache policy, the rate-limit fields) wait
 * here and go out in the answer's one writeHead, beside its own. Through setHeader, each was
 * validated, lower-cased and stored, then merged header by header into writeHead's: a measurable
 * share of a REST get's own time (docs/benchmarks.md). A header set later replaces an early one of
 * the same name, as setHeader would; once anything used setHeader, Node merges one by one anyway.
 * getHeader does not see early headers: nothing of ours reads its own response's headers back.
 */
export class EdgeResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** [name, value, ...] not yet on the response. */
  #early: OutgoingHttpHeader[] | undefined;
  #setOneByOne = false;

  /** Sets a header the answer will carry, as setHeader does (after the headers went: it throws too). */
  setEarlyHeader(name: string, value: string): void {
    if (this.headersSent) return void this.setHeader(name, value);
    if (this.#early === undefined) this.#early = [name, value];
    else put(this.#early, name, value);
  }

  override setHeader(name: string, value: number | string | readonly string[]): this {
    this.#setOneByOne = true;
    return super.setHeader(name, value);
  }

  override writeHead(statusCode: number, reason?: string | HeaderList, headers?: HeaderList): this {
    const early = this.#early;
    if (early === undefined) return super.writeHead(statusCode, reason as string, headers as OutgoingHttpHeaders);
    this.#early = undefined;
    if (this.#setOneByOne) {
      // Node merges setHeader's and writeHead's header by header: the early ones go first, where unset.
      for (let i = 0; i < early.length; i += 2) {
        const name = early[i] as string;
        const set = this.getHeader(name);
        if (set === undefined) super.setHeader(name, early[i + 1] as string);
        else if (isVary(name)) super.setHeader(name, joinVary(early[i + 1], set));
      }
      return super.writeHead(statusCode, reason as string, headers as OutgoingHttpHeaders);
    }
    if (typeof reason === 'string') return super.writeHead(statusCode, reason, merged(early, headers));
    return super.writeHead(statusCode, merged(early, reason ?? headers));
  }
}

/** A header the answer will carry: early on our servers' responses, through setHeader on any other. */
export function setEarlyHeader(res: ServerResponse, name: string, value: string): void {
  if (res instanceof EdgeResponse) res.setEarlyHeader(name, value);
  else res.setHeader(name, value);
}
