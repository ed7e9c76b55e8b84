// RFC 8288 Link header: `<uri-reference>; rel="next"; title="…", <…>; rel=prev`. A hand-written scanner
// reads each character once, so a hostile header costs time in its length, and the length is capped.

/** Longer Link headers are refused unread; a next-page link of this API is a few hundred characters. */
export const MAX_LINK_HEADER_LENGTH = 8192;

export interface LinkValue {
  /** The URI reference between `<` and `>`, unresolved. */
  target: string;
  /** The relation types, lower-cased (rel may hold several, separated by spaces). */
  rel: string[];
}

export class LinkHeaderError extends Error {
  override name = 'LinkHeaderError';
}

const TOKEN_CHARACTER = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;

function scannerOf(header: string) {
  let at = 0;
  const fail = (what: string): never => {
    throw new LinkHeaderError(`malformed Link header: ${what} at character ${at}`);
  };
  const skipSpace = () => {
    while (header[at] === ' ' || header[at] === '\t') at++;
  };
  const token = () => {
    const start = at;
    while (at < header.length && TOKEN_CHARACTER.test(header[at] ?? '')) at++;
    return at > start ? header.slice(start, at) : fail('expected a token');
  };
  const quoted = () => {
    let value = '';
    for (at++; at < header.length && header[at] !== '"'; at++) {
      if (header[at] === '\\') at++;
      value += header[at] ?? '';
    }
    if (header[at] !== '"') fail('unterminated quoted string');
    at++;
    return value;
  };
  const target = () => {
    if (header[at] !== '<') fail('expected "<"');
    const close = header.indexOf('>', at);
    if (close < 0) fail('expected ">"');
    const value = header.slice(at + 1, close);
    at = close + 1;
    return value;
  };
  /** `; name[=value]` pairs up to the next `,` or the end; the first of a repeated name counts (RFC 8288 §3.3). */
  const parameters = () => {
    const found = new Map<string, string>();
    for (skipSpace(); at < header.length && header[at] !== ','; skipSpace()) {
      if (header[at] !== ';') fail('expected ";" or ","');
      at++;
      skipSpace();
      const name = token().toLowerCase();
      skipSpace();
      let value = '';
      if (header[at] === '=') {
        at++;
        skipSpace();
        value = header[at] === '"' ? quoted() : token();
      }
      if (!found.has(name)) found.set(name, value);
    }
    return found;
  };
  const skipComma = () => {
    if (header[at] !== ',') return false;
    at++;
    return true;
  };
  return { atEnd: () => at >= header.length, skipSpace, skipComma, target, parameters };
}

/** Every link of a Link header, in order. Throws LinkHeaderError when it is too long or malformed. */
export function parseLinkHeader(header: string): LinkValue[] {
  if (header.length > MAX_LINK_HEADER_LENGTH) {
    throw new LinkHeaderError(`Link header of ${header.length} characters (at most ${MAX_LINK_HEADER_LENGTH} read)`);
  }
  const scan = scannerOf(header);
  const links: LinkValue[] = [];
  for (scan.skipSpace(); !scan.atEnd(); scan.skipSpace()) {
    if (scan.skipComma()) continue; // empty list elements are allowed (RFC 9110 §5.6.1)
    const target = scan.target();
    const rel = scan.parameters().get('rel') ?? '';
    links.push({
      target,
      rel: rel
        .toLowerCase()
        .split(/[ \t]+/)
        .filter(Boolean),
    });
  }
  return links;
}

/**
 * The next page's URL, resolved against the page that named it, or undefined on the last page. Only a
 * link to the same origin and path as `listUrl` is returned: the client sends its key with every
 * request, so a link elsewhere (another host, scheme or port) is refused, never followed.
 */
export function nextPageUrl(header: string | null, pageUrl: string | URL, listUrl: string | URL): URL | undefined {
  if (header === null) return undefined;
  const next = parseLinkHeader(header).find((link) => link.rel.includes('next'));
  if (!next) return undefined;
  const url = URL.parse(next.target, pageUrl);
  if (!url) throw new LinkHeaderError(`the next-page link ${JSON.stringify(next.target)} is not a URL`);
  const expected = new URL(listUrl);
  if (url.origin !== expected.origin || url.pathname !== expected.pathname) {
    throw new LinkHeaderError(
      `not following a next-page link away from ${expected.origin}${expected.pathname}: ${url}`,
    );
  }
  return url;
}
