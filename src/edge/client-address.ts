import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import proxyaddr from 'proxy-addr';

/** The address a request came from, as the failed-authentication limit counts it. */
export type ClientAddress = (req: IncomingMessage) => string;

/**
 * Without trusted proxies, the socket's peer: X-Forwarded-For is anyone's to write. With them
 * (TRUST_PROXY), the nearest address in X-Forwarded-For that is not one of them, as Express's
 * `trust proxy` computes `req.ip` (proxy-addr): behind a balancer every socket is the balancer's, and
 * one client's failed keys would otherwise lock out every client.
 */
export function clientAddressOf(trustedProxies: readonly string[]): ClientAddress {
  if (trustedProxies.length === 0) return (req) => req.socket.remoteAddress ?? '';
  const trusted = proxyaddr.compile([...trustedProxies]);
  return (req) => (req.socket.remoteAddress ? proxyaddr(req, trusted) : '');
}

/** Why `entry` cannot name trusted proxies (undefined when it can): an address, a CIDR range or a name. */
export function trustedProxyProblem(entry: string): string | undefined {
  try {
    proxyaddr.compile(entry);
    return undefined;
  } catch (error) {
    return `${(error as Error).message} (expected an IP address, a CIDR range, loopback, linklocal or uniquelocal)`;
  }
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The eight 16-bit groups of a valid IPv6 address (an IPv4 tail is two of them), as numbers. */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const groupsOf = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [Number.parseInt(group, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const before = groupsOf(head);
  const after = tail === undefined ? [] : groupsOf(tail);
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/**
 * Whose failed authentications count together: an IPv4 address alone, an IPv6 address with its whole
 * /64 (one subscriber's network: anyone holding one address holds the 2^64 around it), and an
 * IPv4-mapped IPv6 address as the IPv4 address it maps. Anything that is not an IP address (an
 * X-Forwarded-For entry nobody checked) counts as itself. The log names clientAddressOf's address.
 */
export function limiterBucketOf(address: string): string {
  const mapped = MAPPED_IPV4.exec(address);
  if (mapped) return mapped[1] as string;
  const bare = address.split('%')[0] as string;
  if (!isIPv6(bare)) return address;
  const prefix = ipv6Groups(bare).slice(0, 4);
  return `${prefix.map((group) => group.toString(16)).join(':')}::/64`;
}
