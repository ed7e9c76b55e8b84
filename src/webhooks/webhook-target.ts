import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Longer than any real receiver's URL; bounds what is stored per endpoint and sent per attempt. */
export const MAX_TARGET_URL_LENGTH = 2_048;

/**
 * ipaddr.js's names of the ranges that are somebody's inside, as operators read them. Every range but
 * `unicast` is refused, these and the rest (6to4, NAT64, Teredo... can carry an inside address).
 */
const ADDRESS_CLASSES = new Map<string, string>([
  ['unspecified', 'an unspecified address'],
  ['loopback', 'a loopback address'],
  ['private', 'a private address'],
  ['linkLocal', 'a link-local address'],
  ['uniqueLocal', 'a unique-local address'],
  ['carrierGradeNat', 'a carrier-grade NAT address'],
  ['multicast', 'a multicast address'],
  ['broadcast', 'a broadcast address'],
  ['reserved', 'a reserved address'],
]);

/** A refusal of the target itself, not of one attempt: its message names the host and address class only. */
export class TargetRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

/** What kind of non-public address this is, with the address, or undefined for public unicast. */
function addressProblem(address: string): string | undefined {
  // process() turns an IPv4-mapped IPv6 address into the IPv4 one it stands for.
  const range = ipaddr.isValid(address) ? ipaddr.process(address).range() : 'unparsable';
  if (range === 'unicast') return undefined;
  return `${ADDRESS_CLASSES.get(range) ?? 'a special-purpose address'} (${address})`;
}

/** The URL's host when it is an IP address (IPv6 without its brackets), else undefined. */
function literalAddress(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}

/**
 * Why a URL is no webhook target, or undefined. Sync, no DNS, so an operator's typo is refused when the
 * endpoint is registered; names are checked at each attempt by resolveTarget. The messages never repeat
 * the URL: its path or query may hold the receiver's token.
 */
export function targetProblem(url: string, { allowPrivate }: { allowPrivate: boolean }): string | undefined {
  if (url.length > MAX_TARGET_URL_LENGTH) return 'the URL is longer than 2,048 characters';
  if (!URL.canParse(url)) return 'the URL cannot be parsed';
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'the URL is neither http: nor https:';
  if (parsed.username !== '' || parsed.password !== '') return 'the URL carries a user name or password';
  if (parsed.hostname === '') return 'the URL has no host';
  const literal = literalAddress(parsed);
  const problem = literal === undefined || allowPrivate ? undefined : addressProblem(literal);
  return problem && `the host is ${problem}`;
}

/** Stops waiting for `work` when `signal` aborts, rejecting with its reason: a lookup cannot be cancelled. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const giveUp = () => reject(signal.reason);
    signal.addEventListener('abort', giveUp, { once: true });
    const stopListening = () => signal.removeEventListener('abort', giveUp);
    work.then(
      (value) => {
        stopListening();
        resolve(value);
      },
      (error: unknown) => {
        stopListening();
        reject(error);
      },
    );
  });
}

/**
 * The one address to connect to. The host is resolved once and the caller connects to what was checked,
 * so a name that answers a public address now and 127.0.0.1 a moment later (DNS rebinding) gains
 * nothing. Any non-public address among the answers refuses the target, unless allowPrivate (tests, a
 * receiver on the operator's own network). A lookup failure rejects with the resolver's error (its code).
 */
export async function resolveTarget(
  url: URL,
  { allowPrivate, signal }: { allowPrivate: boolean; signal: AbortSignal },
): Promise<ResolvedTarget> {
  const literal = literalAddress(url);
  const answers =
    literal === undefined
      ? await untilAborted(lookup(url.hostname, { all: true }), signal)
      : [{ address: literal, family: isIP(literal) }];
  const problem = allowPrivate ? undefined : answers.map(({ address }) => addressProblem(address)).find(Boolean);
  if (problem !== undefined) {
    throw new TargetRefusedError(`${literal === undefined ? `${url.hostname} resolves to` : 'the host is'} ${problem}`);
  }
  const [first] = answers;
  if (first === undefined) throw Object.assign(new Error('no address'), { code: 'ENOTFOUND' });
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
