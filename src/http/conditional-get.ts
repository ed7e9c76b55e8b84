import { hash } from 'node:crypto';

/**
 * RFC 9111: a browser (a private cache) may keep a keyed answer but must revalidate it before each
 * use, so polling costs a 304 instead of a body; a shared cache never keeps it. Errors stay no-store.
 */
export const REVALIDATED_CACHE_CONTROL = 'private, no-cache';

/**
 * What the answer depends on besides its URL: the key (each key's answer is its own); GraphQL's
 * also on Accept (its media type). CORS adds Origin where it applies (edge-response.ts joins Vary).
 */
export const REST_VARY = 'Authorization';
export const GRAPHQL_VARY = 'Authorization, Accept';

/** Most entity tags compared from one If-None-Match: a longer list is read no further (a full answer). */
export const MOST_COMPARED_TAGS = 32;

/**
 * A strong validator (RFC 9110 §8.8.3) of one representation: its media type, the headers it sets
 * from the data (a page's `Link: rel="next"`, which a new pet can add while the body stays the same),
 * and its exact body. SHA-256 rather than a fast non-cryptographic hash: pet names are anyone's text,
 * and no one must be able to craft a changed page with an unchanged tag; node's native digest of a
 * bounded body costs little next to writing it. 128 bits of it, base64url: short, and no accidental
 * collision. Header lines hold no newline, so the blank line before the body keeps the parts apart.
 */
export function entityTagOf(mediaType: string, body: string, headers: Readonly<Record<string, string>> = {}): string {
  // One string and node's one-shot hash: a Hash object per answer cost more than the digest itself.
  let text = `${mediaType}\n`;
  for (const name in headers) text += `${name}: ${headers[name]}\n`;
  return `"${hash('sha256', `${text}\n${body}`, 'base64url').slice(0, 22)}"`;
}

const SPACE = 0x20;
const TAB = 0x09;
const COMMA = 0x2c;
const QUOTE = 0x22;

/**
 * RFC 9110 §13.1.2: whether If-None-Match names `tag` (weak comparison: `W/` ignored) or is `*`.
 * One pass over the header, at most MOST_COMPARED_TAGS tags; a malformed list stops the reading
 * there, which is always safe: the client gets the full answer. Undefined (not sent): false.
 */
export function ifNoneMatchNames(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  let at = 0;
  for (let compared = 0; at < header.length && compared < MOST_COMPARED_TAGS; ) {
    const char = header.charCodeAt(at);
    if (char === SPACE || char === TAB || char === COMMA) {
      at += 1;
      continue;
    }
    if (header.startsWith('W/', at)) at += 2;
    if (header.charCodeAt(at) !== QUOTE) return false;
    const end = header.indexOf('"', at + 1);
    if (end === -1) return false;
    if (end + 1 - at === tag.length && header.startsWith(tag, at)) return true;
    at = end + 1;
    compared += 1;
  }
  return false;
}

/** What a GET's 200 is made of, for its tag. */
export interface Representation {
  mediaType: string;
  body: string;
  /** The headers the answer sets from the data (never the static ones: those of a deprecated route). */
  headers?: Readonly<Record<string, string>>;
}

/** What a 200 to a GET carries, and whether the client's copy is current (then the answer is 304). */
export interface Validation {
  notModified: boolean;
  headers: Record<string, string>;
}

/** What a 304 gives back: the rate-limit point its request took (rate-limits.ts revalidated). */
export interface Revalidating {
  keyId: string;
  id: string;
  setResponseHeader(name: string, value: string): void;
  /** Whether the request's point was taken: nothing else is given back. */
  pointPaid?: boolean;
}
export type GiveBack = (exchange: Revalidating) => Promise<unknown> | undefined;

/**
 * The decision REST and GraphQL GETs share: validate, and before a 304 matched by an entity tag, give
 * its rate-limit point back (its RateLimit headers must say so). Not one matched by `*`: only a tag
 * saved the client a body (`*` matches any answer, whatever the client holds). Awaited only then: a
 * 200 stays synchronous.
 */
export function revalidate(
  ifNoneMatch: string | undefined,
  answer: Representation,
  vary: string,
  giving: { exchange: Revalidating; giveBack: GiveBack | undefined },
): Validation | Promise<Validation> {
  const etag = entityTagOf(answer.mediaType, answer.body, answer.headers);
  const notModified = ifNoneMatchNames(ifNoneMatch, etag);
  const checked = { notModified, headers: { ETag: etag, 'Cache-Control': REVALIDATED_CACHE_CONTROL, Vary: vary } };
  const matchedTag = notModified && (ifNoneMatch as string).trim() !== '*';
  const given = matchedTag ? giving.giveBack?.(giving.exchange) : undefined;
  return given === undefined ? checked : given.then(() => checked);
}
